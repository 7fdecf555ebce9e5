cd /workspace/etc/nginx
sed -i -e 's/^worker_processes 1;/worker_processes auto;/' -e 's/worker_connections 768;/worker_connections 2048;/' \
  -e 's/^\(\s*\)# \(gzip on;\)/\1\2/' -e 's/^\(\s*\)# \(gzip_types \)/\1\2/' -e 's/^\(\s*\)# \(server_tokens off;\)/\1\2/' nginx.conf
