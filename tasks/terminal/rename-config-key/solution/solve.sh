cd /workspace
find etc/app -type f -name '*.conf' -exec sed -i -E 's/^([[:space:]]*)db_host([[:space:]]*=)/\1database_host\2/' {} +
