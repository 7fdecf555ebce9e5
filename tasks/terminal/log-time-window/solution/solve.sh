cd /workspace
awk '{ ts = $1 " " $2 } ts >= "2024-03-10 12:00:00" && ts <= "2024-03-10 12:30:00"' service.log > window.log
