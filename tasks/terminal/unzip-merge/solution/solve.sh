cd /workspace
mkdir -p /tmp/unz && unzip -o -q incoming/delivery.zip -d /tmp/unz
cat /tmp/unz/parts/dataset.bin.part[0-9][0-9] > dataset.bin
test "$(sha256sum < dataset.bin | cut -d' ' -f1)" = "$(cut -d' ' -f1 /tmp/unz/parts/dataset.bin.sha256)"
