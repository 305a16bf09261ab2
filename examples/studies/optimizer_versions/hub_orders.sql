-- the hub customers' orders: tier and customer_id are correlated (hubs hold half the orders)
SELECT count(*)
FROM customers c JOIN orders o ON o.customer_id = c.id
WHERE c.tier = 'hub';
