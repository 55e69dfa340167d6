//! The client against a real throw-away cluster: every password method, wrong passwords,
//! simple and extended queries, server errors that leave the connection usable, and the
//! cluster's files gone after it stops. Skipped (with the reason printed) only where the
//! PostgreSQL server binaries are not installed.

use super::client::{PgConfig, PgConn, PgError};
use super::cluster::{bin_dir, Cluster, ClusterOptions};
use super::wire::Param;

/// A cluster in a fresh directory, or None (reason printed) without PostgreSQL binaries.
pub(crate) fn cluster_or_skip() -> Option<(tempfile::TempDir, Cluster)> {
    if let Err(e) = bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries here ({e})");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
        return None;
    }
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let c = Cluster::start(dir.path(), &ClusterOptions::default()).expect("cluster starts");
    Some((dir, c))
}

fn as_user(base: &PgConfig, user: &str, password: Option<&str>) -> PgConfig {
    PgConfig {
        user: user.into(),
        password: password.map(str::to_string),
        dbname: "postgres".into(),
        ..base.clone()
    }
}

#[test]
fn every_password_method_logs_in_and_wrong_passwords_are_refused() {
    let Some((_dir, cluster)) = cluster_or_skip() else { return };
    let base = cluster.config.clone();
    let mut admin = PgConn::connect(&base).expect("SCRAM login");
    admin
        .execute(
            "SET password_encryption = 'md5'; CREATE ROLE u_md5 LOGIN PASSWORD 'pw-md5'; \
             SET password_encryption = 'scram-sha-256'; CREATE ROLE u_clear LOGIN PASSWORD 'pw-clear'; \
             CREATE ROLE u_trust LOGIN",
        )
        .expect("roles");
    let hba = cluster.root().join("data/pg_hba.conf");
    let old = std::fs::read_to_string(&hba).expect("pg_hba");
    let lines = "host all u_md5 127.0.0.1/32 md5\nhost all u_clear 127.0.0.1/32 password\n\
                 host all u_trust 127.0.0.1/32 trust\n";
    std::fs::write(&hba, format!("{lines}{old}")).expect("write pg_hba");
    admin.execute("SELECT pg_reload_conf()").expect("reload");
    std::thread::sleep(std::time::Duration::from_millis(300));
    for (user, pw) in [("u_md5", Some("pw-md5")), ("u_clear", Some("pw-clear")), ("u_trust", None)] {
        let mut c = PgConn::connect(&as_user(&base, user, pw)).unwrap_or_else(|e| panic!("{user}: {e}"));
        let rows = c.query_rows("SELECT current_user").expect("query");
        assert_eq!(rows, vec![vec![Some(user.to_string())]]);
    }
    for (user, pw) in [("u_md5", "nope"), ("u_clear", "nope"), ("racehorse", "nope")] {
        let e = PgConn::connect(&as_user(&base, user, Some(pw))).err().expect("wrong password");
        assert!(matches!(e, PgError::Auth { .. }), "{user}: {e}");
        assert!(e.to_string().contains("password authentication failed"), "{e}");
    }
    let e = PgConn::connect(&as_user(&base, "racehorse", None)).err().expect("no password");
    assert!(e.to_string().contains("none was given"), "{e}");
}

#[test]
fn simple_and_prepared_queries_and_errors() {
    let Some((_dir, cluster)) = cluster_or_skip() else { return };
    let mut c = PgConn::connect(&cluster.config).expect("connect");
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").expect("create");
    c.prepare("ins", "INSERT INTO t (id, v) VALUES ($1, $2)").expect("parse");
    for i in 1..=5 {
        let out = c.run_prepared("ins", &[Param::Int(i), Param::Text(&format!("v{i}"))]).expect("insert");
        assert_eq!(out.affected, 1);
    }
    c.prepare("sel", "SELECT v FROM t WHERE id BETWEEN $1 AND $2 ORDER BY id").expect("parse");
    let rows = c.query_prepared("sel", &[Param::Int(2), Param::Int(4)]).expect("select");
    assert_eq!(rows, vec![vec![Some("v2".into())], vec![Some("v3".into())], vec![Some("v4".into())]]);
    assert_eq!(c.run_prepared("sel", &[Param::Int(1), Param::Int(5)]).expect("count").rows, 5);
    // A unique violation is a server error with its SQLSTATE; the connection stays usable.
    let e = c.run_prepared("ins", &[Param::Int(1), Param::Null]).expect_err("duplicate");
    assert_eq!(e.sqlstate(), Some("23505"), "{e}");
    let e = c.execute("SELECT * FROM missing_table").expect_err("no table");
    assert_eq!(e.sqlstate(), Some("42P01"), "{e}");
    assert_eq!(c.query_rows("SELECT count(*) FROM t").expect("after errors"), vec![vec![Some("5".into())]]);
    let big = c.query_rows("SELECT repeat('x', 100000)").expect("long value");
    assert_eq!(big[0][0].as_ref().map(String::len), Some(100_000));
}

#[test]
fn the_cluster_leaves_nothing_behind() {
    let Some((dir, cluster)) = cluster_or_skip() else { return };
    let pid = cluster.postmaster_pid().expect("running");
    let root = cluster.root().to_path_buf();
    assert!(root.join("data/PG_VERSION").exists());
    drop(cluster);
    assert!(!root.exists(), "files removed");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "postmaster gone");
    drop(dir);
}

#[test]
fn a_directory_the_server_user_cannot_enter_is_named_in_the_error() {
    if let Err(e) = bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries here ({e})");
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "PostgreSQL is required here");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        racehorse_testkit::skip!("the server runs as another user only when racehorse is root");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let outer = tempfile::tempdir_in("/var/tmp").expect("tmp");
    std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let cell = outer.path().join("cell");
    std::fs::create_dir(&cell).expect("cell dir");
    let e = Cluster::start(&cell, &ClusterOptions::default()).err().expect("initdb cannot reach its files");
    let msg = e.to_string();
    assert!(msg.contains("cannot enter") && msg.contains(&outer.path().display().to_string()), "{msg}");
    assert!(msg.contains("chmod o+x"), "{msg}");
    assert!(!cell.join("pg-auto").exists(), "the failed cluster's directory is removed");
}

#[test]
fn closed_ancestors_are_found_by_their_mode_bits() {
    use super::cluster::closed_ancestor;
    use std::os::unix::fs::PermissionsExt;
    let outer = tempfile::tempdir().expect("tmp");
    let inner = outer.path().join("a/b");
    std::fs::create_dir_all(&inner).expect("dirs");
    std::fs::set_permissions(outer.path().join("a"), std::fs::Permissions::from_mode(0o750)).expect("chmod");
    // A stranger (neither owner nor group) cannot enter a/; its owner can.
    let found = closed_ancestor(&inner.join("data"), 4_000_000, 4_000_000).expect("a/ is closed");
    assert_eq!(found.0, outer.path().join("a"));
    assert_eq!(found.1, 0o750);
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(closed_ancestor(&inner.join("data"), uid, gid), None);
}

#[test]
fn a_pg_bin_without_the_programs_says_how_to_install_them() {
    let e = super::cluster::bin_dir_from(Some("/nonexistent".into())).expect_err("no binaries");
    assert!(e.to_string().contains("apt-get install postgresql"), "{e}");
}
