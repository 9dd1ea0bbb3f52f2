//! The SQLite store's write transactions. rusqlite's own transactions parse
//! `BEGIN IMMEDIATE` and `COMMIT` anew each time, which on a one-step commit
//! is a noticeable share of the work; these run the same statements from the
//! connection's statement cache. A transaction that is dropped without
//! committing rolls back, as rusqlite's does.

use std::ops::Deref;

use rusqlite::Connection;

/// A `BEGIN IMMEDIATE` transaction on a connection held for writing.
pub(crate) struct Immediate<'c> {
    connection: &'c Connection,
    open: bool,
}

impl<'c> Immediate<'c> {
    /// Begin a transaction that holds the file's write lock from the start.
    pub(crate) fn begin(connection: &'c Connection) -> rusqlite::Result<Self> {
        run(connection, "BEGIN IMMEDIATE")?;
        Ok(Self {
            connection,
            open: true,
        })
    }

    /// Commit it. A commit that fails leaves it to roll back when dropped.
    pub(crate) fn commit(mut self) -> rusqlite::Result<()> {
        run(self.connection, "COMMIT")?;
        self.open = false;
        Ok(())
    }
}

impl Deref for Immediate<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.connection
    }
}

impl Drop for Immediate<'_> {
    fn drop(&mut self) {
        if self.open && !self.connection.is_autocommit() {
            // A rollback that fails leaves the transaction for SQLite to end
            // when the connection closes; nothing of it was committed.
            let _ = run(self.connection, "ROLLBACK");
        }
    }
}

/// Run `sql`, a statement without rows, from the statement cache.
fn run(connection: &Connection, sql: &str) -> rusqlite::Result<()> {
    connection.prepare_cached(sql)?.execute([]).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(connection: &Connection) -> i64 {
        connection
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_committed_transaction_keeps_its_writes_and_a_dropped_one_leaves_none() {
        let connection = Connection::open_in_memory().unwrap();
        connection.execute_batch("CREATE TABLE t (x)").unwrap();
        for _ in 0..2 {
            let transaction = Immediate::begin(&connection).unwrap();
            transaction.execute("INSERT INTO t VALUES (1)", []).unwrap();
            transaction.commit().unwrap();
        }
        assert_eq!(counted(&connection), 2);
        {
            let transaction = Immediate::begin(&connection).unwrap();
            transaction.execute("INSERT INTO t VALUES (1)", []).unwrap();
        }
        assert!(
            connection.is_autocommit(),
            "the dropped transaction is still open"
        );
        assert_eq!(counted(&connection), 2);
        let transaction = Immediate::begin(&connection).unwrap();
        transaction.execute("INSERT INTO t VALUES (1)", []).unwrap();
        transaction.commit().unwrap();
        assert_eq!(counted(&connection), 3);
    }
}
