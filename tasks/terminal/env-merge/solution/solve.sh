cd /workspace
cat defaults.env overrides.env | grep -v -e '^#' -e '^[[:space:]]*$' \
  | awk -F= '{ k = $1; v[k] = $0 } END { for (k in v) print v[k] }' | LC_ALL=C sort -t= -k1,1 > .env
