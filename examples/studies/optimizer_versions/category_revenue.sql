-- revenue of one product category from a few customers: a four-way join
SELECT p.category, sum(p.price * l.qty)
FROM customers c
JOIN orders o ON o.customer_id = c.id
JOIN order_lines l ON l.order_id = o.id
JOIN products p ON p.id = l.product_id
WHERE c.id <= 20 AND p.category = 7
GROUP BY p.category;
