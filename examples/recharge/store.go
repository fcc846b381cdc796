package recharge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // registers "sqlite" (pure Go, no cgo)
)

// Order states.
const (
	StatusUnpaid = "unpaid"
	StatusPaid   = "paid"
)

var (
	// ErrOrderNotFound: no order with that id.
	ErrOrderNotFound = errors.New("recharge: order not found")
	// ErrStaleFence: a newer lock holder has claimed the order, so this
	// holder's lock expired while it worked; its write was refused and rolled
	// back.
	ErrStaleFence = errors.New("recharge: stale lock holder: a newer fencing token has claimed the order")
	// ErrBalanceOverflow: the credit would take the account's balance past
	// the largest BIGINT; nothing was written.
	ErrBalanceOverflow = errors.New("recharge: credit would overflow the account balance")
	// ErrNotPayable: the order is neither unpaid nor paid (cancelled,
	// refunded, ...): only an unpaid order is paid; nothing was written.
	ErrNotPayable = errors.New("recharge: order is not in a payable state")
	// ErrDatabaseUnavailable: the database could not be reached, or refused
	// work for now (connection refused or broken, no answer within the 10 s
	// a recharge's database call may take, server shutting down or
	// starting, too many connections, a PostgreSQL server taking no writes
	// as a primary demoted in a failover, a statement canceled past
	// PostgreSQL's statement_timeout or lock_timeout, a PostgreSQL session
	// ended by idle_in_transaction_session_timeout, a PostgreSQL
	// transaction rolled back as a deadlock victim or on a serialization
	// failure, SQLite busy past its timeout). The
	// front ends answer 503 / Unavailable: retry later. A payment whose
	// commit was cut off may have been made; its retry finds it (see
	// Payment).
	ErrDatabaseUnavailable = errors.New("recharge: database unavailable")
	// ErrInvalidSeed: Seed was asked for a negative count, or for orders
	// without an account to belong to; nothing was written.
	ErrInvalidSeed = errors.New("recharge: invalid seed counts")
)

// databaseDown reports whether err says the database is out of reach or
// refuses work for now, rather than that this statement failed.
func databaseDown(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 connection exception, 53 insufficient resources (too
		// many connections, disk full), 57P operator intervention (admin
		// or crash shutdown, cannot connect now), 25006 read-only
		// transaction (a primary demoted in a failover, or a standby:
		// writes go through once the connections reach the new primary),
		// 57014 a statement canceled (past statement_timeout, on a server
		// under load or a row kept locked) and 55P03 a lock not granted
		// within lock_timeout, and 25P03 a session ended by
		// idle_in_transaction_session_timeout (its transaction rolled
		// back; see OpenPostgres): nothing of it was done. 40001 serialization
		// failure (REPEATABLE READ or SERIALIZABLE: a concurrent
		// transaction changed what this one read) and 40P01 deadlock
		// detected (this transaction chosen as the victim): PostgreSQL
		// rolled the whole transaction back, and asks for it to be run
		// again.
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "57P") ||
			pe.Code == "25006" || pe.Code == "57014" || pe.Code == "55P03" || pe.Code == "25P03" || pe.Code == "40001" || pe.Code == "40P01"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 5, 6, 10, 13, 14: // SQLITE_BUSY, _LOCKED, _IOERR, _FULL, _CANTOPEN
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.Timeout(err)
}

// Payment is one row of payments, written by Pay with the order's status:
// what the run that paid the order knew when it answered.
type Payment struct {
	OrderID int64
	// Fence is the token the paying write carried (0 without the lock). The
	// order's own fence moves on with every later claim.
	Fence int64
	// Request is the idempotency.RequestID of the request that paid, "" for
	// a request without an Idempotency-Key.
	Request string
}

// Order is one row of orders.
type Order struct {
	ID        int64
	AccountID int64
	Amount    int64
	Status    string
	Fence     int64
}

// Store is the recharge database: SQLite (pure Go, embedded) or PostgreSQL
// (pgx). The schema is created by Open.
type Store struct {
	db      *sql.DB
	dialect string // "sqlite" or "postgres"

	// SQLite runs one write transaction at a time. Waiting for it here is
	// cheaper and fairer than every writer spinning on SQLITE_BUSY.
	writeMu sync.Mutex
}

const schema = `
CREATE TABLE IF NOT EXISTS accounts (
	id      BIGINT PRIMARY KEY,
	balance BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS orders (
	id         BIGINT PRIMARY KEY,
	account_id BIGINT NOT NULL REFERENCES accounts(id),
	amount     BIGINT NOT NULL CHECK (amount > 0),
	status     TEXT   NOT NULL DEFAULT 'unpaid',
	fence      BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS payments (
	order_id BIGINT PRIMARY KEY REFERENCES orders(id),
	fence    BIGINT NOT NULL,
	request  TEXT   NOT NULL DEFAULT ''
)`

// OpenSQLite opens (creating if needed) the SQLite database file at path in
// WAL mode and creates the schema.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	// The path goes into a URI, where '?' would start the query (dropping the
	// pragmas), '#' the fragment, and %XX would be decoded: each would open
	// another file than the one named.
	dsn := "file:" + sqlitePathEscaper.Replace(path) + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	return open(ctx, db, "sqlite")
}

var sqlitePathEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// OpenPostgres connects to PostgreSQL with a pgx DSN
// ("postgres://user:pass@host:5432/db") and creates the schema.
//
// Its sessions end a transaction left idle for half of the 10 s a
// recharge's database calls may take (idle_in_transaction_session_timeout,
// set on each connection where nothing set it: a value the DSN, PGOPTIONS,
// the role, the database or the server sets, 0 (none) included, is kept), so that a retry
// waiting on the row gets it within its own 10 s: a payment whose
// connection broke in the middle of its transaction, while the server kept
// the session (a peer gone silent is noticed only by TCP keepalive, after
// hours), would otherwise keep the order's row locked, and the retry of the
// payment would wait on it, holding the order's lock, for as long. Rolled
// back, the orphan paid nothing, and the retry pays.
func OpenPostgres(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		// Set where nothing set it: 0, no timeout, is a value the DSN,
		// the role, the database or the server may set on purpose.
		_, err := c.Exec(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, false)
			WHERE (SELECT source FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout') = 'default'`,
			strconv.FormatInt((dbTimeout/2).Milliseconds(), 10))
		return err
	}))
	db.SetMaxOpenConns(32)
	return open(ctx, db, "postgres")
}

func open(ctx context.Context, db *sql.DB, dialect string) (*Store, error) {
	s := &Store{db: db, dialect: dialect}
	for _, stmt := range strings.Split(schema, ";") {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("recharge: create schema: %w", err)
		}
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DB is the underlying database handle.
func (s *Store) DB() *sql.DB { return s.db }

// q rewrites ? placeholders as $1, $2, ... for PostgreSQL.
func (s *Store) q(query string) string {
	if s.dialect != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lockWrites serializes write transactions on SQLite; a no-op on PostgreSQL.
func (s *Store) lockWrites() func() {
	if s.dialect != "sqlite" {
		return func() {}
	}
	s.writeMu.Lock()
	return s.writeMu.Unlock
}

// Seed creates accounts 1..accounts with a zero balance and orders
// 1..orders, unpaid, spread over the accounts, order i for amount(i). Counts
// that cannot be honoured give ErrInvalidSeed.
func (s *Store) Seed(ctx context.Context, accounts, orders int, amount func(i int) int64) error {
	if accounts < 0 || orders < 0 || orders > 0 && accounts == 0 {
		return fmt.Errorf("%w: %d accounts, %d orders (orders need an account)", ErrInvalidSeed, accounts, orders)
	}
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for a := 1; a <= accounts; a++ {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO accounts (id, balance) VALUES (?, 0)`), a); err != nil {
			return fmt.Errorf("recharge: seed account %d: %w", a, err)
		}
	}
	for o := 1; o <= orders; o++ {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO orders (id, account_id, amount, status, fence) VALUES (?, ?, ?, 'unpaid', 0)`),
			o, (o-1)%accounts+1, amount(o)); err != nil {
			return fmt.Errorf("recharge: seed order %d: %w", o, err)
		}
	}
	return tx.Commit()
}

// Order reads one order.
func (s *Store) Order(ctx context.Context, id int64) (Order, error) {
	o := Order{ID: id}
	err := s.db.QueryRowContext(ctx, s.q(`SELECT account_id, amount, status, fence FROM orders WHERE id = ?`), id).
		Scan(&o.AccountID, &o.Amount, &o.Status, &o.Fence)
	if errors.Is(err, sql.ErrNoRows) {
		return o, ErrOrderNotFound
	}
	return o, err
}

// Claim records fencing token on the order before the holder reads and acts
// on it, and returns the order as it is now: UPDATE orders SET fence = token
// WHERE id = ? AND fence < token. Once a holder has claimed an order, every
// holder with an older token is refused (here and in Pay), so a holder whose
// lock expired while it worked can no longer write, whichever of the two
// writes first. A token not above the recorded one gives ErrStaleFence.
func (s *Store) Claim(ctx context.Context, id, token int64) (Order, error) {
	unlock := s.lockWrites()
	o := Order{ID: id, Fence: token}
	err := s.db.QueryRowContext(ctx, s.q(`UPDATE orders SET fence = ? WHERE id = ? AND fence < ? RETURNING account_id, amount, status`),
		token, id, token).Scan(&o.AccountID, &o.Amount, &o.Status)
	unlock()
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.Order(ctx, id); err != nil {
			return o, err // ErrOrderNotFound, or a database error
		}
		return o, ErrStaleFence
	}
	return o, err
}

// Pay marks the claimed order paid and credits its account, in one
// transaction. The order update only matches while the order still carries
// token and is unpaid (UPDATE orders SET status = 'paid' WHERE id = ? AND
// fence = token AND status = 'unpaid'); when a newer holder has claimed it
// since, nothing is written and Pay returns ErrStaleFence, and when it is
// not unpaid (paid already, cancelled, ...) ErrNotPayable. The account
// credited and the amount are the order row's, returned by that update; an o
// whose AccountID or Amount differ from them is refused, nothing written.
//
// The same transaction records the payment (see Payment): token and
// request, the idempotency.RequestID of the request paying ("" for none), so
// that a retry of that request whose first answer was lost can answer the
// same.
//
// token 0 is the unsafe path, with no lock and so no token: the order is
// marked paid whether it is unpaid or already paid (a plain check-then-act
// with no condition on the write), and only the first payment is recorded; an order in
// any other state gives ErrNotPayable.
func (s *Store) Pay(ctx context.Context, o Order, token int64, request string) error {
	defer s.lockWrites()()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The credit is the order's own account and amount, read back from the
	// row this statement marks paid, never the caller's copy of the order.
	var account, amt int64
	if token == 0 {
		// Paid or unpaid, not only unpaid: the unchecked write of a plain
		// check-then-act, which credits once per duplicate that read the
		// order unpaid. Any other state (cancelled, ...) is never paid.
		err = tx.QueryRowContext(ctx, s.q(`UPDATE orders SET status = 'paid' WHERE id = ? AND status IN ('unpaid', 'paid') RETURNING account_id, amount`), o.ID).
			Scan(&account, &amt)
	} else {
		err = tx.QueryRowContext(ctx, s.q(`UPDATE orders SET status = 'paid' WHERE id = ? AND fence = ? AND status = 'unpaid' RETURNING account_id, amount`), o.ID, token).
			Scan(&account, &amt)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows) && token == 0:
		if _, err := s.orderTx(ctx, tx, o.ID); err != nil {
			return err // ErrOrderNotFound, or a database error
		}
		return ErrNotPayable
	case errors.Is(err, sql.ErrNoRows):
		// deferred Rollback: nothing of this holder's is written
		fence, err := s.orderTx(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		if fence != token {
			return ErrStaleFence
		}
		return ErrNotPayable
	case err != nil:
		return err
	}
	if account != o.AccountID || amt != o.Amount {
		return fmt.Errorf("recharge: order %d is %d for account %d, not %d for account %d: not paid",
			o.ID, amt, account, o.Amount, o.AccountID)
	}
	if o.Amount <= 0 {
		return fmt.Errorf("recharge: credit account %d: amount %d is not positive", o.AccountID, o.Amount)
	}
	// The balance must stay an exact BIGINT: SQLite turns an overflowing
	// integer sum into a floating-point number instead of failing, so the
	// bound is checked here, the same way on every database.
	res, err := tx.ExecContext(ctx, s.q(`UPDATE accounts SET balance = balance + ? WHERE id = ? AND balance <= ?`),
		o.Amount, o.AccountID, math.MaxInt64-o.Amount)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("recharge: credit account %d: %w", o.AccountID, err)
	} else if n != 1 {
		var exists int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT 1 FROM accounts WHERE id = ?`), o.AccountID).Scan(&exists); err == nil {
			return fmt.Errorf("recharge: credit account %d: %w", o.AccountID, ErrBalanceOverflow)
		}
		return fmt.Errorf("recharge: credit account %d: %d rows updated, want 1", o.AccountID, n)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO payments (order_id, fence, request) VALUES (?, ?, ?) ON CONFLICT (order_id) DO NOTHING`),
		o.ID, token, request); err != nil {
		return fmt.Errorf("recharge: record payment of order %d: %w", o.ID, err)
	}
	if err := tx.Commit(); err != nil {
		if commitRefused(err) {
			return fmt.Errorf("recharge: commit payment of order %d: %w", o.ID, err)
		}
		// The COMMIT may have reached the server and been made while its
		// reply was lost: the payment's fate is unknown here.
		return fmt.Errorf("recharge: commit payment of order %d: %w: %w", o.ID, errCommitUnanswered, err)
	}
	return nil
}

// errCommitUnanswered marks a payment whose COMMIT failed without saying
// whether it was made (see Service.Counts).
var errCommitUnanswered = errors.New("commit not confirmed")

// commitRefused reports whether a failed COMMIT is known not to have been
// made: the transaction had ended before it was sent; PostgreSQL answered
// it with an ERROR (one past the commit point would be a PANIC) or with
// ROLLBACK, or had ended the session idle in the transaction, before the
// COMMIT; or SQLite, which runs in this process and has no reply to lose,
// failed it. Any other failure (a broken connection, a timeout, a FATAL
// that may follow a commit made locally, such as a shutdown during a
// synchronous replication wait) leaves its fate unknown.
func commitRefused(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity == "ERROR" || pe.SeverityUnlocalized == "ERROR" || pe.Code == "25P03"
	}
	var se *sqlite.Error
	return errors.As(err, &se) || errors.Is(err, sql.ErrTxDone) || errors.Is(err, pgx.ErrTxCommitRollback)
}

// orderTx reads order id's fence inside tx: ErrOrderNotFound when there is
// no such order.
func (s *Store) orderTx(ctx context.Context, tx *sql.Tx, id int64) (int64, error) {
	var fence int64
	err := tx.QueryRowContext(ctx, s.q(`SELECT fence FROM orders WHERE id = ?`), id).Scan(&fence)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrOrderNotFound
	}
	return fence, err
}

// Payment reads the payment of a paid order. ok is false for an order not
// paid, or paid before payments were recorded.
func (s *Store) Payment(ctx context.Context, orderID int64) (p Payment, ok bool, err error) {
	p.OrderID = orderID
	err = s.db.QueryRowContext(ctx, s.q(`SELECT fence, request FROM payments WHERE order_id = ?`), orderID).
		Scan(&p.Fence, &p.Request)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	return p, err == nil, err
}

// Totals sums the accounts' balances, the amounts of paid orders, and counts
// paid orders.
func (s *Store) Totals(ctx context.Context) (balance, paidAmount, paid int64, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(balance), 0) FROM accounts`).Scan(&balance)
	if err == nil {
		err = s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0), COUNT(*) FROM orders WHERE status = 'paid'`).Scan(&paidAmount, &paid)
	}
	return balance, paidAmount, paid, err
}
