\sleep 10sec
