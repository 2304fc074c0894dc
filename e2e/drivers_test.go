package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"lockd/internal/lockdtest"
)

// psycopg2 and PostgreSQL's JDBC driver authenticate with SCRAM-SHA-256,
// over plain TCP and over SSL with full verification against a CA the
// test makes, and are refused with PostgreSQL's message for a wrong
// password. Each is skipped where the driver is not installed (Debian:
// python3-psycopg2, libpostgresql-jdbc-java with a JDK).

// driverServer starts lockd with SSL and an hba file asking every
// client but postgres for a SCRAM password, and makes role alice.
func driverServer(t *testing.T) (*lockdtest.Instance, *lockdtest.TestCA) {
	t.Helper()
	ca := lockdtest.NewTestCA(t)
	hba := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"hba_file=" + hba, "ssl=on",
		"ssl_cert_file=" + ca.CertFile, "ssl_key_file=" + ca.KeyFile}})
	c := inst.Connect(t)
	if _, err := c.Exec(t.Context(), "create role alice login password 'wonderland'"); err != nil {
		t.Fatal(err)
	}
	return inst, ca
}

const psycopg2Script = `
import sys, psycopg2
dsn = sys.argv[1]
try:
    conn = psycopg2.connect(dsn)
except psycopg2.OperationalError as e:
    print("refused:", str(e).strip().splitlines()[-1])
    sys.exit(0)
cur = conn.cursor()
cur.execute("select current_user, ssl from pg_stat_ssl where pid = pg_backend_pid()")
print("ok:", *cur.fetchone())
conn.close()
`

func TestPsycopg2SCRAM(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import psycopg2").Run(); err != nil {
		t.Skipf("psycopg2 not installed for %s (apt-get install python3-psycopg2): %v", python, err)
	}
	inst, ca := driverServer(t)
	base := "host=localhost hostaddr=127.0.0.1 port=" + strconv.Itoa(inst.Port) + " dbname=postgres user=alice "
	for _, c := range []struct{ dsn, want string }{
		{base + "password=wonderland sslmode=disable", "ok: alice False\n"},
		{base + "password=wonderland sslmode=verify-full sslrootcert=" + ca.CAFile, "ok: alice True\n"},
		{base + "password=wrong sslmode=verify-full sslrootcert=" + ca.CAFile, "refused: connection to server at \"127.0.0.1\", port " + strconv.Itoa(inst.Port) + " failed: FATAL:  password authentication failed for user \"alice\"\n"},
	} {
		o := run(t, 30e9, python, "-c", psycopg2Script, c.dsn)
		if o.code != 0 || o.stdout != c.want {
			t.Errorf("%s: exit %d\n%s%s\nwant %s", c.dsn, o.code, o.stdout, o.stderr, c.want)
		}
	}
}

const jdbcProgram = `
import java.sql.*;
public class Scram {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2]);
             Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select current_user, ssl from pg_stat_ssl where pid = pg_backend_pid()")) {
            r.next();
            System.out.println("ok: " + r.getString(1) + " " + r.getBoolean(2));
        } catch (SQLException e) {
            System.out.println("refused: " + e.getSQLState() + " " + e.getMessage());
        }
    }
}
`

func TestJDBCSCRAM(t *testing.T) {
	java := need(t, "java")
	jar := "/usr/share/java/postgresql.jar"
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("PostgreSQL JDBC driver not installed (apt-get install libpostgresql-jdbc-java): %v", err)
	}
	inst, ca := driverServer(t)
	src := filepath.Join(t.TempDir(), "Scram.java")
	if err := os.WriteFile(src, []byte(jdbcProgram), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "jdbc:postgresql://localhost:" + strconv.Itoa(inst.Port) + "/postgres"
	for _, c := range []struct{ url, password, want string }{
		{url + "?sslmode=disable", "wonderland", "ok: alice false\n"},
		{url + "?sslmode=verify-full&sslrootcert=" + ca.CAFile, "wonderland", "ok: alice true\n"},
		{url + "?sslmode=disable", "wrong", "refused: 28P01 FATAL: password authentication failed for user \"alice\"\n"},
	} {
		// java runs a single source file without a compile step.
		o := run(t, 60e9, java, "-cp", jar, src, c.url, "alice", c.password)
		if o.code != 0 || o.stdout != c.want {
			t.Errorf("%s: exit %d\n%s%s\nwant %s", c.url, o.code, o.stdout, o.stderr, c.want)
		}
	}
}

// jdbcFetchProgram reads 1000 rows through PostgreSQL's JDBC driver with
// autocommit off and a fetch size of 10 — the driver then binds a named
// portal and Executes it 10 rows at a time, each Execute ending in
// PortalSuspended — and, while the result set is open, lists pg_cursors
// from the same connection, where PostgreSQL 15 shows the protocol
// portals: the named one being read, and the unnamed one running the
// pg_cursors query itself.
const jdbcFetchProgram = `
import java.sql.*;
public class Fetch {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], "postgres", "")) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("create table big as select g as id, 'row ' || g as v from generate_series(1, 1000) g");
            }
            for (String q : new String[] {"select id, v from big where id > ? order by id", "select id, v from big where id > ?"}) {
                PreparedStatement ps = c.prepareStatement(q);
                ps.setFetchSize(10);
                ps.setInt(1, 0);
                int n = 0;
                try (ResultSet r = ps.executeQuery()) {
                    while (r.next()) {
                        n++;
                        if (r.getInt(1) != n || !r.getString(2).equals("row " + n)) {
                            throw new RuntimeException("row " + n + " is " + r.getInt(1) + " " + r.getString(2));
                        }
                        if (n == 15) {
                            try (Statement s = c.createStatement();
                                 ResultSet cur = s.executeQuery("select name, statement, is_holdable, is_binary, is_scrollable from pg_cursors order by name")) {
                                while (cur.next()) {
                                    String name = cur.getString(1);
                                    System.out.println("cursor " + (name.startsWith("C_") ? "C_n" : "'" + name + "'") + " | " + cur.getString(2) + " | "
                                        + cur.getBoolean(3) + " " + cur.getBoolean(4) + " " + cur.getBoolean(5));
                                }
                            }
                        }
                    }
                }
                System.out.println("rows " + n);
            }
            c.commit();
        }
    }
}
`

// TestJDBCFetchSize: the JDBC driver's setFetchSize in a transaction reads
// every row, in order, through a suspended protocol portal, which
// pg_cursors lists as PostgreSQL 15 does (checked against one).
func TestJDBCFetchSize(t *testing.T) {
	java := need(t, "java")
	jar := "/usr/share/java/postgresql.jar"
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("PostgreSQL JDBC driver not installed (apt-get install libpostgresql-jdbc-java): %v", err)
	}
	inst := lockdtest.Start(t, lockdtest.Options{})
	src := filepath.Join(t.TempDir(), "Fetch.java")
	if err := os.WriteFile(src, []byte(jdbcFetchProgram), 0o600); err != nil {
		t.Fatal(err)
	}
	o := run(t, 60e9, java, "-cp", jar, src, "jdbc:postgresql://127.0.0.1:"+strconv.Itoa(inst.Port)+"/postgres?loggerLevel=OFF")
	const pgCursors = "cursor '' | select name, statement, is_holdable, is_binary, is_scrollable from pg_cursors order by name | false false false\n"
	want := pgCursors +
		"cursor C_n | select id, v from big where id > $1 order by id | false false false\n" +
		"rows 1000\n" +
		pgCursors +
		"cursor C_n | select id, v from big where id > $1 | false false false\n" +
		"rows 1000\n"
	if o.code != 0 || o.stdout != want {
		t.Errorf("exit %d\n%s%s\nwant\n%s", o.code, o.stdout, o.stderr, want)
	}
}
