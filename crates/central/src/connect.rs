//! Connecting to the central database: the URL in libpq's forms (parsed by racehorse-pg's
//! `PgConfig`: `postgres://USER[:PASSWORD]@HOST:PORT/DB?sslmode=…&sslrootcert=…`), the
//! password from the URL or PGPASSWORD, and TLS through rustls (tokio-postgres-rustls) with
//! libpq's meaning of each sslmode (require: encrypted, certificate unchecked; verify-ca and
//! verify-full: checked against sslrootcert or the system's roots). Messages show the URL
//! without its password.

use crate::error::CentralError;
use racehorse_pg::{PgConfig, SslMode};
use std::sync::Arc;

/// Whether `--db` names a PostgreSQL database rather than a SQLite file.
pub fn is_central(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// The URL with any password replaced by `***` (for messages).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let (main, query) = rest.split_once('?').map_or((rest, None), |(m, q)| (m, Some(q)));
    let main = match main.rsplit_once('@') {
        Some((auth, host)) if auth.contains(':') => {
            format!("{}:***@{host}", auth.split_once(':').map_or(auth, |a| a.0))
        }
        _ => main.to_string(),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|kv| if kv.starts_with("password=") { "password=***" } else { kv })
            .collect::<Vec<_>>()
            .join("&")
    });
    match query {
        Some(q) => format!("{scheme}://{main}?{q}"),
        None => format!("{scheme}://{main}"),
    }
}

/// The client's settings for `url`: host (or socket directory), port, user, database,
/// password (else $PGPASSWORD), timeout and how TLS is negotiated.
fn client_config(url: &str) -> Result<(postgres::Config, PgConfig), CentralError> {
    let bad = |why: String| CentralError::Url { url: redacted(url), why };
    let pg = PgConfig::parse(url).map_err(|e| bad(e.to_string()))?;
    let mut cfg = postgres::Config::new();
    cfg.host(&pg.host)
        .port(pg.port)
        .user(&pg.user)
        .dbname(&pg.dbname)
        .connect_timeout(pg.connect_timeout)
        .application_name("racehorse");
    if let Some(p) = pg.password.clone().or_else(|| std::env::var("PGPASSWORD").ok()) {
        cfg.password(p);
    }
    cfg.ssl_mode(match pg.sslmode {
        SslMode::Disable => postgres::config::SslMode::Disable,
        SslMode::Allow | SslMode::Prefer => postgres::config::SslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => postgres::config::SslMode::Require,
    });
    Ok((cfg, pg))
}

/// A connection to the database `url` names.
pub fn connect(url: &str) -> Result<postgres::Client, CentralError> {
    let (cfg, pg) = client_config(url)?;
    let failed = |why: String| CentralError::Connect { url: redacted(url), why };
    let result = if pg.sslmode == SslMode::Disable {
        cfg.connect(postgres::NoTls)
    } else {
        let tls = racehorse_pg::tls::client_config(&pg).map_err(failed)?;
        cfg.connect(tokio_postgres_rustls::MakeRustlsConnect::new(Arc::unwrap_or_clone(tls)))
    };
    result.map_err(|e| failed(crate::error::pg_why(&e)))
}

/// A connection to `url` whose central schema is at this racehorse's version: a newer one is
/// refused, an older (or absent) one too, with `when_older` saying what the user can do.
pub fn connect_current(url: &str, when_older: &str) -> Result<postgres::Client, CentralError> {
    let mut client = connect(url)?;
    let found = crate::schema::version(&mut client)?;
    let known = crate::schema::CENTRAL_VERSION;
    if found > known {
        return Err(CentralError::TooNew { found, known });
    }
    if found < known {
        return Err(CentralError::UnknownRun(format!(
            "{} holds no racehorse runs at central schema version {known} (found version {found}); {when_older}",
            redacted(url)
        )));
    }
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redacted("postgres://u:s3cret@h:5432/db?sslmode=require"),
            "postgres://u:***@h:5432/db?sslmode=require"
        );
        assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redacted("postgresql://h/db?password=x&sslmode=disable"),
            "postgresql://h/db?password=***&sslmode=disable"
        );
        let e = connect("postgres://u:s3cret@h:notaport/db").err().expect("a bad port");
        assert!(e.is_usage() && !e.to_string().contains("s3cret"), "{e}");
    }

    #[test]
    fn central_urls_are_told_from_files() {
        assert!(is_central("postgres://u@h/db") && is_central("postgresql://h/db"));
        assert!(!is_central("/var/lib/racehorse.db") && !is_central("postgres.db"));
    }

    #[test]
    fn sslmode_maps_to_the_client_and_unknown_keys_are_refused() {
        let (cfg, pg) = client_config("postgres://u@127.0.0.1:6000/fleet?sslmode=verify-full").unwrap();
        assert_eq!(
            (cfg.get_ssl_mode(), pg.port, cfg.get_dbname()),
            (postgres::config::SslMode::Require, 6000, Some("fleet"))
        );
        assert!(client_config("postgres://u@h/db?sslmode=sometimes").unwrap_err().is_usage());
        assert!(client_config("postgres://u@h/db?colour=red").is_err());
    }
}
