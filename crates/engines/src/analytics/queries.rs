//! The ten analytical queries over the star schema: joins of the fact table with one to three
//! dimensions, aggregates, sorts, a CTE self-join, correlated and uncorrelated subqueries,
//! NOT EXISTS and CASE bands. Written in the SQL SQLite and PostgreSQL share, so both
//! backends run the same text and must return the same rows.

/// (name, what it exercises, SQL).
pub const QUERIES: [(&str, &str, &str); 10] = [
    (
        "q01",
        "revenue by year and region: fact ⋈ 2 dimensions, group, sort",
        "SELECT d.year, s.region, SUM(f.amount) AS revenue, COUNT(*) AS n FROM sales f \
         JOIN dates d ON f.date_id = d.date_id JOIN stores s ON f.store_id = s.store_id \
         GROUP BY d.year, s.region ORDER BY d.year, revenue DESC",
    ),
    (
        "q02",
        "top 10 products of 2022: filter, group, sort, limit",
        "SELECT p.product_id, p.brand, SUM(f.amount) AS revenue FROM sales f \
         JOIN products p ON f.product_id = p.product_id JOIN dates d ON f.date_id = d.date_id \
         WHERE d.year = 2022 GROUP BY p.product_id, p.brand ORDER BY revenue DESC, p.product_id LIMIT 10",
    ),
    (
        "q03",
        "monthly revenue per category in Q2 and Q4: IN filter, 3-key group",
        "SELECT d.year, d.month, p.category, SUM(f.amount) AS revenue, AVG(f.quantity) AS avg_qty FROM sales f \
         JOIN dates d ON f.date_id = d.date_id JOIN products p ON f.product_id = p.product_id \
         WHERE d.quarter IN (2, 4) GROUP BY d.year, d.month, p.category ORDER BY d.year, d.month, p.category",
    ),
    (
        "q04",
        "customers spending over twice the average: derived tables, scalar subquery",
        "SELECT c.customer_id, c.segment, t.spend FROM customers c \
         JOIN (SELECT customer_id, SUM(amount) AS spend FROM sales GROUP BY customer_id) t \
         ON t.customer_id = c.customer_id \
         WHERE t.spend > (SELECT 2 * AVG(a.spend) FROM (SELECT SUM(amount) AS spend FROM sales GROUP BY customer_id) a) \
         ORDER BY t.spend DESC, c.customer_id",
    ),
    (
        "q05",
        "distinct customers per region and quarter: COUNT(DISTINCT)",
        "SELECT s.region, d.year, d.quarter, COUNT(DISTINCT f.customer_id) AS customers FROM sales f \
         JOIN stores s ON f.store_id = s.store_id JOIN dates d ON f.date_id = d.date_id \
         GROUP BY s.region, d.year, d.quarter ORDER BY s.region, d.year, d.quarter",
    ),
    (
        "q06",
        "brand share of its category: join with an aggregated derived table",
        "SELECT p.category, p.brand, SUM(f.amount) / MAX(c.total) AS share FROM sales f \
         JOIN products p ON f.product_id = p.product_id \
         JOIN (SELECT p2.category, SUM(f2.amount) AS total FROM sales f2 \
               JOIN products p2 ON f2.product_id = p2.product_id GROUP BY p2.category) c ON c.category = p.category \
         GROUP BY p.category, p.brand ORDER BY p.category, share DESC, p.brand",
    ),
    (
        "q07",
        "year-over-year growth per category: CTE self-join",
        "WITH yc AS (SELECT p.category, d.year, SUM(f.amount) AS revenue FROM sales f \
         JOIN products p ON f.product_id = p.product_id JOIN dates d ON f.date_id = d.date_id \
         GROUP BY p.category, d.year) \
         SELECT a.category, a.year, a.revenue / b.revenue - 1 AS growth FROM yc a \
         JOIN yc b ON a.category = b.category AND a.year = b.year + 1 ORDER BY a.category, a.year",
    ),
    (
        "q08",
        "stores above their region's average: correlated subquery",
        "SELECT s.store_id, s.region, t.revenue FROM stores s \
         JOIN (SELECT store_id, SUM(amount) AS revenue FROM sales GROUP BY store_id) t ON t.store_id = s.store_id \
         WHERE t.revenue > (SELECT AVG(t2.revenue) FROM (SELECT store_id, SUM(amount) AS revenue FROM sales \
               GROUP BY store_id) t2 JOIN stores s2 ON s2.store_id = t2.store_id WHERE s2.region = s.region) \
         ORDER BY s.region, t.revenue DESC",
    ),
    (
        "q09",
        "products unsold in December 2023: NOT EXISTS anti-join",
        "SELECT p.product_id, p.category FROM products p WHERE NOT EXISTS (SELECT 1 FROM sales f \
         JOIN dates d ON f.date_id = d.date_id WHERE f.product_id = p.product_id AND d.year = 2023 AND d.month = 12) \
         ORDER BY p.product_id",
    ),
    (
        "q10",
        "discount bands by customer segment: CASE, group, sort",
        "SELECT CASE WHEN f.discount = 0 THEN 'none' WHEN f.discount < 0.1 THEN 'low' \
         WHEN f.discount < 0.25 THEN 'mid' ELSE 'high' END AS band, c.segment, COUNT(*) AS n, \
         AVG(f.quantity) AS avg_qty, SUM(f.amount) AS revenue FROM sales f \
         JOIN customers c ON f.customer_id = c.customer_id GROUP BY 1, c.segment ORDER BY 1, c.segment",
    ),
];
