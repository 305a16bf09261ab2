\sleep 10 us ms
