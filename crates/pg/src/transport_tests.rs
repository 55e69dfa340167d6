//! The client's transports against real throw-away clusters: TLS in every sslmode (with a
//! test CA and server certificate made by rcgen), a server without TLS, Unix-socket DSNs in
//! both forms, and SASLprep'd SCRAM passwords. Skipped (reason printed) only where the
//! PostgreSQL server binaries are not installed.

use super::client::{PgConfig, PgConn, SslMode};
use super::cluster::{bin_dir, Cluster, ClusterOptions};
use super::tests::cluster_or_skip;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};

/// A CA certificate (PEM) and its key.
fn make_ca(name: &str) -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().expect("CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    (params.self_signed(&key).expect("CA cert"), key)
}

/// Writes the test CA (ca.pem), a second unrelated CA (other-ca.pem), and a server certificate
/// for "localhost" only, signed by the first CA (server.crt, server.key).
fn make_certs(dir: &Path) -> (PathBuf, PathBuf, (PathBuf, PathBuf)) {
    let (ca, ca_key) = make_ca("racehorse test CA");
    let (other, _) = make_ca("some other CA");
    let key = KeyPair::generate().expect("server key");
    let params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
    let cert = params.signed_by(&key, &ca, &ca_key).expect("server cert");
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write PEM");
        p
    };
    let ca_pem = write("ca.pem", ca.pem());
    let other_pem = write("other-ca.pem", other.pem());
    let crt = write("server.crt", cert.pem());
    let key = write("server.key", key.serialize_pem());
    (ca_pem, other_pem, (crt, key))
}

fn cfg_with(base: &PgConfig, host: &str, mode: SslMode, root: Option<&Path>) -> PgConfig {
    PgConfig { host: host.into(), sslmode: mode, sslrootcert: root.map(Path::to_path_buf), ..base.clone() }
}

/// Whether the server sees this connection as encrypted.
fn server_says_ssl(c: &mut PgConn) -> String {
    let rows =
        c.query_rows("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()").expect("pg_stat_ssl");
    rows[0][0].clone().unwrap_or_default()
}

#[test]
fn tls_modes_encrypt_and_check_certificates_as_libpq_does() {
    if let Err(e) = bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries here ({e})");
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "PostgreSQL is required here");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let (ca, other_ca, cert_key) = make_certs(dir.path());
    let opts = ClusterOptions { tls_cert_key: Some(cert_key), ..ClusterOptions::default() };
    let cluster = Cluster::start(dir.path(), &opts).expect("cluster with ssl=on");
    let base = cluster.config.clone();
    // Encrypted without a certificate check (require, prefer), or with one (verify-*).
    let ok = [
        ("127.0.0.1", SslMode::Require, None),
        ("127.0.0.1", SslMode::Prefer, None),
        ("127.0.0.1", SslMode::VerifyCa, Some(ca.as_path())),
        ("localhost", SslMode::VerifyFull, Some(ca.as_path())),
    ];
    for (host, mode, root) in ok {
        let mut c =
            PgConn::connect(&cfg_with(&base, host, mode, root)).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert!(c.is_tls(), "{mode:?}");
        assert_eq!(server_says_ssl(&mut c), "true", "{mode:?}");
    }
    let mut plain = PgConn::connect(&cfg_with(&base, "127.0.0.1", SslMode::Disable, None)).expect("disable");
    assert!(!plain.is_tls());
    assert_eq!(server_says_ssl(&mut plain), "false");
    // Refused: the name is not in the certificate (verify-full only), or the chain is not
    // trusted (verify-ca, and require once a root certificate is given).
    let refused = [
        ("127.0.0.1", SslMode::VerifyFull, ca.as_path(), "not valid for name"),
        ("127.0.0.1", SslMode::VerifyCa, other_ca.as_path(), "UnknownIssuer"),
        ("localhost", SslMode::VerifyFull, other_ca.as_path(), "UnknownIssuer"),
        ("127.0.0.1", SslMode::Require, other_ca.as_path(), "UnknownIssuer"),
    ];
    for (host, mode, root, why) in refused {
        let e = PgConn::connect(&cfg_with(&base, host, mode, Some(root))).err().expect("refused");
        let msg = e.to_string();
        assert!(msg.contains("TLS handshake failed") && msg.contains(why), "{mode:?} {host}: {msg}");
    }
    let missing = dir.path().join("absent.pem");
    let e = PgConn::connect(&cfg_with(&base, "127.0.0.1", SslMode::VerifyCa, Some(&missing)))
        .err()
        .expect("no file");
    assert!(e.to_string().contains("absent.pem"), "{e}");
    // A server that refuses plain connections: allow retries with TLS, disable cannot log in.
    let hba = cluster.root().join("data/pg_hba.conf");
    let old = std::fs::read_to_string(&hba).expect("pg_hba");
    std::fs::write(&hba, format!("hostnossl all all 127.0.0.1/32 reject\n{old}")).expect("write pg_hba");
    plain.execute("SELECT pg_reload_conf()").expect("reload");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let c = PgConn::connect(&cfg_with(&base, "127.0.0.1", SslMode::Allow, None)).expect("allow");
    assert!(c.is_tls(), "allow fell back to TLS");
    let e =
        PgConn::connect(&cfg_with(&base, "127.0.0.1", SslMode::Disable, None)).err().expect("plain refused");
    assert!(e.to_string().contains("pg_hba.conf rejects connection"), "{e}");
}

#[test]
fn unix_socket_dsns_connect_and_tls_is_not_faked_there() {
    if let Err(e) = bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries here ({e})");
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "PostgreSQL is required here");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let opts = ClusterOptions { unix_socket: true, ..ClusterOptions::default() };
    let cluster = Cluster::start(dir.path(), &opts).expect("cluster with a socket");
    let sock = cluster.socket_dir().expect("socket dir").display().to_string();
    let base = &cluster.config;
    let pw = base.password.clone().expect("password");
    let keyword = format!("host={sock} port={} user={} password={pw} dbname=postgres", base.port, base.user);
    let uri = format!("postgres:///postgres?host={sock}&port={}&user={}&password={pw}", base.port, base.user);
    for dsn in [&keyword, &uri] {
        let cfg = PgConfig::parse(dsn).expect("dsn");
        let mut c = PgConn::connect(&cfg).unwrap_or_else(|e| panic!("{dsn}: {e}"));
        assert!(!c.is_tls());
        // Over a Unix socket the server has no client address.
        let rows = c.query_rows("SELECT inet_client_addr() IS NULL").expect("query");
        assert_eq!(rows, vec![vec![Some("t".into())]], "{dsn}");
    }
    let e = PgConn::connect(&PgConfig::parse(&format!("{keyword} sslmode=require")).expect("dsn")).err();
    let msg = e.expect("refused").to_string();
    assert!(msg.contains("Unix socket") && msg.contains("sslmode=require"), "{msg}");
    // The server has no TLS (ssl = off): require is an error, prefer falls back to plain.
    let e = PgConn::connect(&cfg_with(base, "127.0.0.1", SslMode::Require, None)).err().expect("no TLS");
    assert!(e.to_string().contains("does not offer TLS"), "{e}");
    let c = PgConn::connect(&cfg_with(base, "127.0.0.1", SslMode::Prefer, None)).expect("prefer");
    assert!(!c.is_tls());
}

#[test]
fn scram_passwords_are_saslprepped_like_the_server_does() {
    let Some((_dir, cluster)) = cluster_or_skip() else { return };
    let mut admin = PgConn::connect(&cluster.config).expect("login");
    // The server stores the verifier of SASLprep("I\u{AD}X") = "IX" (the soft hyphen maps to nothing).
    admin.execute("CREATE ROLE u_prep LOGIN PASSWORD 'I\u{AD}X'").expect("role");
    for pw in ["I\u{AD}X", "IX", "\u{2168}"] {
        let cfg = PgConfig { user: "u_prep".into(), password: Some(pw.into()), ..cluster.config.clone() };
        let mut c = PgConn::connect(&cfg).unwrap_or_else(|e| panic!("{pw:?}: {e}"));
        assert_eq!(c.query_rows("SELECT current_user").expect("query"), vec![vec![Some("u_prep".into())]]);
    }
}
