//! The star schema of the `analytics` engine and its generated data: a `sales` fact table
//! (100,000 rows per unit of scale) around four dimensions (`dates` 2020–2023, `stores`,
//! `products`, `customers`). Values are drawn from a seeded generator, so a scale and seed
//! always give the same data on SQLite and PostgreSQL. Popular products and customers are
//! skewed (a squared uniform), discounts are mostly zero, as in real sales data.

use crate::support::rng::SplitMix64;

pub const REGIONS: [&str; 5] = ["north", "south", "east", "west", "central"];
pub const SEGMENTS: [&str; 4] = ["consumer", "corporate", "home_office", "small_business"];
pub const CATEGORIES: usize = 12;
pub const FIRST_YEAR: u32 = 2020;
pub const YEARS: u32 = 4;

/// Row counts at a scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub sales: u64,
    pub customers: u64,
    pub products: u64,
    pub stores: u64,
    pub dates: u64,
}

impl Sizes {
    pub fn at(scale: u64) -> Sizes {
        Sizes {
            sales: 100_000 * scale,
            customers: 5_000 * scale,
            products: 500 + 100 * scale,
            stores: 20 + 5 * scale,
            dates: 0,
        }
        .with_dates()
    }
    fn with_dates(mut self) -> Self {
        self.dates = calendar().len() as u64;
        self
    }
}

/// (year, month, day, weekday 0=Monday) for every day of the four years.
fn calendar() -> Vec<(u32, u32, u32, u32)> {
    let mut out = Vec::new();
    let mut weekday = 2; // 2020-01-01 was a Wednesday
    for year in FIRST_YEAR..FIRST_YEAR + YEARS {
        let leap = year % 4 == 0;
        for (m, days) in
            [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31].into_iter().enumerate()
        {
            for day in 1..=days {
                out.push((year, m as u32 + 1, day, weekday));
                weekday = (weekday + 1) % 7;
            }
        }
    }
    out
}

/// The CREATE TABLE statements (portable between SQLite and PostgreSQL), dimensions first.
pub const DDL: &[&str] = &[
    "CREATE TABLE dates (date_id INTEGER PRIMARY KEY, year INTEGER NOT NULL, quarter INTEGER NOT NULL, \
     month INTEGER NOT NULL, day INTEGER NOT NULL, weekday INTEGER NOT NULL)",
    "CREATE TABLE stores (store_id INTEGER PRIMARY KEY, region TEXT NOT NULL, city TEXT NOT NULL, size_sqft INTEGER NOT NULL)",
    "CREATE TABLE products (product_id INTEGER PRIMARY KEY, category TEXT NOT NULL, brand TEXT NOT NULL, \
     list_price DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, segment TEXT NOT NULL, region TEXT NOT NULL, \
     birth_year INTEGER NOT NULL)",
    "CREATE TABLE sales (sale_id INTEGER PRIMARY KEY, date_id INTEGER NOT NULL, store_id INTEGER NOT NULL, \
     product_id INTEGER NOT NULL, customer_id INTEGER NOT NULL, quantity INTEGER NOT NULL, \
     amount DOUBLE PRECISION NOT NULL, discount DOUBLE PRECISION NOT NULL)",
];

/// Secondary indexes, created after the load.
pub const INDEXES: &[&str] = &[
    "CREATE INDEX sales_date ON sales (date_id)",
    "CREATE INDEX sales_product ON sales (product_id)",
    "CREATE INDEX sales_customer ON sales (customer_id)",
];

/// Rows per INSERT statement.
const BATCH: usize = 1000;

/// Emits INSERT statements of up to [`BATCH`] rows for `table`.
fn batched(
    table: &str,
    rows: impl Iterator<Item = String>,
    emit: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut sql = String::new();
    let mut n = 0;
    for row in rows {
        if n == 0 {
            sql = format!("INSERT INTO {table} VALUES ");
        } else {
            sql.push(',');
        }
        sql.push_str(&row);
        n += 1;
        if n == BATCH {
            emit(&sql)?;
            n = 0;
        }
    }
    if n > 0 {
        emit(&sql)?;
    }
    Ok(())
}

/// A skewed id in 1..=n: low ids are popular.
fn skewed(rng: &mut SplitMix64, n: u64) -> u64 {
    let u = rng.unit_f64();
    1 + ((u * u * n as f64) as u64).min(n - 1)
}

/// Emits the whole data set: DDL, the rows, the indexes.
pub fn generate(
    scale: u64,
    seed: u64,
    emit: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let z = Sizes::at(scale);
    let mut rng = SplitMix64::new(seed);
    for ddl in DDL {
        emit(ddl)?;
    }
    let cal = calendar();
    batched(
        "dates",
        cal.iter()
            .enumerate()
            .map(|(i, (y, m, d, w))| format!("({},{y},{},{m},{d},{w})", i + 1, (m - 1) / 3 + 1)),
        emit,
    )?;
    let stores: Vec<String> = (1..=z.stores)
        .map(|i| {
            format!(
                "({i},'{}','city{}',{})",
                REGIONS[rng.below(5) as usize],
                rng.below(200),
                5_000 + rng.below(45_000)
            )
        })
        .collect();
    batched("stores", stores.into_iter(), emit)?;
    let products: Vec<String> = (1..=z.products)
        .map(|i| {
            let cat = rng.below(CATEGORIES as u64);
            format!(
                "({i},'cat{cat:02}','brand{:03}',{:.2})",
                cat * 10 + rng.below(10),
                1.0 + rng.unit_f64() * 499.0
            )
        })
        .collect();
    let prices: Vec<f64> = products
        .iter()
        .map(|p| p.rsplit(',').next().unwrap().trim_end_matches(')').parse().unwrap())
        .collect();
    batched("products", products.into_iter(), emit)?;
    let customers: Vec<String> = (1..=z.customers)
        .map(|i| {
            let (s, r) = (SEGMENTS[rng.below(4) as usize], REGIONS[rng.below(5) as usize]);
            format!("({i},'{s}','{r}',{})", 1940 + rng.below(65))
        })
        .collect();
    batched("customers", customers.into_iter(), emit)?;
    let sales = (1..=z.sales).map(|i| {
        let product = skewed(&mut rng, z.products);
        let quantity = 1 + rng.below(10);
        let discount = match rng.below(10) {
            0..=5 => 0.0,
            6 | 7 => 0.05,
            8 => 0.15,
            _ => 0.30,
        };
        let amount = prices[product as usize - 1] * quantity as f64 * (1.0 - discount);
        format!(
            "({i},{},{},{product},{},{quantity},{amount:.2},{discount})",
            1 + rng.below(z.dates),
            1 + rng.below(z.stores),
            skewed(&mut rng, z.customers)
        )
    });
    batched("sales", sales, emit)?;
    for ix in INDEXES {
        emit(ix)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_set_has_the_stated_sizes_and_is_reproducible() {
        let z = Sizes::at(1);
        assert_eq!(z.dates, 1461, "2020 and 2024 … four years, one leap");
        let mut a = Vec::new();
        generate(1, 7, &mut |s| {
            a.push(s.to_string());
            Ok(())
        })
        .unwrap();
        let rows = |t: &str| -> usize {
            a.iter()
                .filter(|s| s.starts_with(&format!("INSERT INTO {t} ")))
                .map(|s| s.matches("),(").count() + 1)
                .sum()
        };
        assert_eq!(rows("sales") as u64, z.sales);
        assert_eq!(rows("customers") as u64, z.customers);
        assert_eq!(rows("dates") as u64, z.dates);
        let mut b = Vec::new();
        generate(1, 7, &mut |s| {
            b.push(s.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(a, b);
        assert!(a.last().unwrap().starts_with("CREATE INDEX"));
    }
}
