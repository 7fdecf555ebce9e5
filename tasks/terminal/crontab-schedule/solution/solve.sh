cd /workspace
cat > crontab.txt <<'CRON'
# m  h  dom mon dow  command
30 2 * * * /workspace/jobs/backup.sh >> /workspace/logs/cron.log 2>&1
*/15 * * * 1-5 /workspace/jobs/cleanup.sh >> /workspace/logs/cron.log 2>&1
0 8 1 * * /workspace/jobs/report.sh >> /workspace/logs/cron.log 2>&1
CRON
