\sleep 1 week
