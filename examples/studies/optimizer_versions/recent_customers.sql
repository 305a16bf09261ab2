-- customers with an order in the last week of the year, by region
SELECT c.region, count(DISTINCT c.id)
FROM customers c
WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.placed >= date '2024-12-24')
GROUP BY c.region;
