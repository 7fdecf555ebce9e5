set -e
cd /workspace
git clone -q -b main repo.bundle project
cd project
git config user.name "Release Bot"
git config user.email release@example.com
echo 1.3.0 > VERSION
sed -i 's/^## Unreleased$/## Unreleased\n\n## 1.3.0 - 2024-03-15/' CHANGELOG.md
head -8 CHANGELOG.md
git add VERSION CHANGELOG.md
git commit -q -m "Release 1.3.0"
git tag -a v1.3.0 -m "greet 1.3.0"
make
./bin/greet --version
stage=$(mktemp -d)
mkdir -p "$stage/greet-1.3.0/bin"
cp bin/greet "$stage/greet-1.3.0/bin/"
cp README.md CHANGELOG.md "$stage/greet-1.3.0/"
mkdir -p /workspace/dist
tar -C "$stage" -czf /workspace/dist/greet-1.3.0.tar.gz greet-1.3.0
cd /workspace/dist
sha256sum greet-1.3.0.tar.gz > SHA256SUMS
sha256sum -c SHA256SUMS
git -C /workspace/project status --porcelain
