cd /workspace/photos
for f in IMG_*.JPG; do
  n=${f#IMG_}; n=${n%.JPG}
  [[ $n =~ ^[0-9]+$ ]] || continue
  mv -- "$f" "$(printf 'photo-%04d.jpg' "$((10#$n))")"
done
