-- A small shop whose columns are correlated across tables, so the planner's independence
-- assumption misestimates some joins: most orders come from a few "hub" customers, and an
-- order's region is the customer's region. Re-runnable (tables dropped first).
DROP TABLE IF EXISTS order_lines;
DROP TABLE IF EXISTS orders;
DROP TABLE IF EXISTS customers;
DROP TABLE IF EXISTS products;

CREATE TABLE customers (id int PRIMARY KEY, region int NOT NULL, tier text NOT NULL);
INSERT INTO customers
SELECT g, g % 20, CASE WHEN g <= 50 THEN 'hub' ELSE 'plain' END
FROM generate_series(1, 5000) g;

CREATE TABLE products (id int PRIMARY KEY, category int NOT NULL, price numeric NOT NULL);
INSERT INTO products SELECT g, g % 40, (g % 97) + 1 FROM generate_series(1, 2000) g;

-- half of the orders belong to the 50 hub customers
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, region int NOT NULL,
                     placed date NOT NULL);
INSERT INTO orders
SELECT g, c, c % 20, date '2024-01-01' + (g % 365)
FROM (SELECT g, CASE WHEN g % 2 = 0 THEN g % 50 + 1 ELSE g % 5000 + 1 END AS c
      FROM generate_series(1, 60000) g) s;
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_placed ON orders (placed);

CREATE TABLE order_lines (order_id int NOT NULL, product_id int NOT NULL, qty int NOT NULL);
INSERT INTO order_lines
SELECT o, (o * 7 + k) % 2000 + 1, k
FROM generate_series(1, 60000) o, generate_series(1, 3) k;
CREATE INDEX order_lines_order ON order_lines (order_id);
CREATE INDEX order_lines_product ON order_lines (product_id);

ANALYZE;
