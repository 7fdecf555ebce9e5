cd /workspace/deploy
find . -type d -exec chmod 755 {} +
find . -type f -exec chmod 644 {} +
chmod 755 bin/*
chmod 600 config/secret.env private/*
chmod 700 private
