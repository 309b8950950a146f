//! The PostgreSQL journal against a real server (tests/common/postgres.rs starts one per test
//! binary, or uses `TOOLGATE_TEST_POSTGRES`).

mod common;

use common::postgres;

#[test]
fn each_test_gets_a_database_of_its_own_and_it_is_dropped() {
    let Some(db) = postgres::database() else {
        return;
    };
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
        .expect("create a table");
    assert_eq!(db.psql("SELECT x FROM t").expect("select"), "7");
    let name = db.name.clone();
    let server = postgres::server().expect("the server");
    let exists = |n: &str| {
        server
            .psql(&format!(
                "SELECT count(*) FROM pg_database WHERE datname = '{n}'"
            ))
            .expect("count")
    };
    assert_eq!(exists(&name), "1");
    drop(db);
    assert_eq!(exists(&name), "0");
}
