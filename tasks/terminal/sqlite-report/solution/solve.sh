cd /workspace
sqlite3 -csv -header shop.db "
SELECT p.name AS product, printf('%.2f', SUM(s.qty * s.unit_price_cents) / 100.0) AS revenue
FROM sales s JOIN products p ON p.id = s.product_id
WHERE s.sold_on >= '2024-02-01' AND s.sold_on < '2024-03-01' AND s.refunded = 0
GROUP BY p.id ORDER BY SUM(s.qty * s.unit_price_cents) DESC, p.name LIMIT 5" > feb_top5.csv
cat feb_top5.csv
