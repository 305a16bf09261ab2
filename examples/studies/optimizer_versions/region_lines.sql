-- order lines of one region's customers in one month: region repeats the customer's
SELECT count(*), sum(l.qty)
FROM customers c
JOIN orders o ON o.customer_id = c.id AND o.region = c.region
JOIN order_lines l ON l.order_id = o.id
WHERE c.region = 3 AND o.placed BETWEEN date '2024-03-01' AND date '2024-03-31';
