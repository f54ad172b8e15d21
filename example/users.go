package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/store"
)

const userUsage = `user add [-admin] NAME   add a user (-admin: a server administrator); password: first line of stdin
user admin NAME true|false  make the user a server administrator, or not
user disable NAME        disable the user, ending every session of it
user enable NAME         enable the user (sessions the disable ended stay ended)
user delete NAME         delete the user (refused while it owns projects)
user password NAME       set a new password (first line of stdin); ends every session of the user
user list
`

// userCommand is a parsed user command: the action and, except for list,
// the username.
type userCommand struct {
	action   string
	username string
	// admin is -admin of add, or the value of admin.
	admin bool
}

// parseUser reads the arguments after "user".
func parseUser(args []string) (userCommand, error) {
	if len(args) == 0 {
		return userCommand{}, usagef("user needs an action: add, admin, disable, enable, delete, password or list")
	}
	switch action := args[0]; action {
	case "add":
		admin := len(args) > 1 && (args[1] == "-admin" || args[1] == "--admin")
		if admin {
			args = args[1:]
		}
		if len(args) != 2 || strings.HasPrefix(args[1], "-") {
			return userCommand{}, usagef("user add takes an optional -admin and exactly one username: user add [-admin] NAME")
		}
		return userCommand{action: action, username: args[1], admin: admin}, nil
	case "admin":
		if len(args) != 3 || (args[2] != "true" && args[2] != "false") {
			return userCommand{}, usagef("user admin takes a username and true or false: user admin NAME true|false")
		}
		return userCommand{action: action, username: args[1], admin: args[2] == "true"}, nil
	case "disable", "enable", "delete", "password":
		if len(args) != 2 {
			return userCommand{}, usagef("user %s takes exactly one argument, the username", action)
		}
		return userCommand{action: action, username: args[1]}, nil
	case "list":
		if len(args) != 1 {
			return userCommand{}, usagef("user list takes no arguments")
		}
		return userCommand{action: action}, nil
	default:
		return userCommand{}, usagef("unknown user action %q: use add, admin, disable, enable, delete, password or list", action)
	}
}

// runUser runs a user command against the configured database.
func runUser(ctx context.Context, e *env, args []string) error {
	cmd, err := parseUser(args)
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if cfg.storeKind == storeMemory {
		return fmt.Errorf("user %s: %s selects the in-memory store, which lives only inside a "+
			"running server process, so accounts cannot be managed from the command line; configure database_url "+
			"(or HDS_DATABASE_URL) as sqlite:PATH or a postgres:// URL, or list the accounts under \"users\" in the config file "+
			"to have the server create them at start", cmd.action, cfg.databaseURLFrom)
	}
	_, users, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("user %s: %w", cmd.action, err)
	}
	defer closeStore()
	return runUserCommand(ctx, users, cmd, e.stdin, e.stdout)
}

// runUserCommand performs one user action on users.
func runUserCommand(ctx context.Context, users store.UserDirectory, cmd userCommand, stdin io.Reader, stdout io.Writer) error {
	notFound := func(err error) error {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("user %q not found", cmd.username)
		}
		return fmt.Errorf("user %s %q: %w", cmd.action, cmd.username, err)
	}
	switch cmd.action {
	case "add":
		password, err := readNewPassword(stdin, cmd.username)
		if err != nil {
			return err
		}
		if err := addUser(ctx, users, cmd.username, password, cmd.admin); err != nil {
			return err
		}
		if cmd.admin {
			fmt.Fprintf(stdout, "user %q added, a server administrator\n", cmd.username)
		} else {
			fmt.Fprintf(stdout, "user %q added\n", cmd.username)
		}
	case "admin":
		if _, err := users.UpdateUser(ctx, cmd.username, store.UserChange{Admin: &cmd.admin}); err != nil {
			return notFound(err)
		}
		if cmd.admin {
			fmt.Fprintf(stdout, "user %q is a server administrator\n", cmd.username)
		} else {
			fmt.Fprintf(stdout, "user %q is no longer a server administrator\n", cmd.username)
		}
	case "password":
		password, err := readNewPassword(stdin, cmd.username)
		if err != nil {
			return err
		}
		if err := setPassword(ctx, users, cmd.username, password); err != nil {
			return notFound(err)
		}
		fmt.Fprintf(stdout, "user %q: password changed; every earlier session of the user has ended\n", cmd.username)
	case "disable", "enable":
		if err := users.SetUserActive(ctx, cmd.username, cmd.action == "enable"); err != nil {
			return notFound(err)
		}
		if cmd.action == "disable" {
			fmt.Fprintf(stdout, "user %q disabled; every session of the user has ended\n", cmd.username)
		} else {
			fmt.Fprintf(stdout, "user %q enabled (sessions ended by the disable stay ended: the user logs in again)\n", cmd.username)
		}
	case "delete":
		if err := users.DeleteUser(ctx, cmd.username); err != nil {
			return notFound(err)
		}
		fmt.Fprintf(stdout, "user %q deleted\n", cmd.username)
	case "list":
		list, _, err := users.ListUsers(ctx, store.ListQuery{})
		if err != nil {
			return fmt.Errorf("user list: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "USERNAME\tSTATUS\tADMIN\tID\tCREATED")
		for _, u := range list {
			status := "active"
			if !u.Active {
				status = "disabled"
			}
			admin := "no"
			if u.Admin {
				admin = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Username, status, admin, u.ID, u.CreatedAt.UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	default:
		return fmt.Errorf("unknown user action %q", cmd.action)
	}
	return nil
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password: give it as the first line of stdin")
	}
	return line, nil
}

// readNewPassword reads the new password of username from the first line
// of r and checks it (checkPassword).
func readNewPassword(r io.Reader, username string) (string, error) {
	password, err := readPassword(r)
	if err != nil {
		return "", err
	}
	if err := checkPassword(password); err != nil {
		return "", fmt.Errorf("user %q: %w", username, err)
	}
	return password, nil
}

// ensureUsers creates each configured user that does not exist yet;
// existing users are left as they are. One whose password is not the
// configuration's (made by an earlier start, or changed since) is said
// in the log with the command that sets it, since the configured
// password will not log in.
func ensureUsers(ctx context.Context, users store.UserDirectory, list []userConfig, logger *slog.Logger, command string) error {
	for _, u := range list {
		existing, err := users.FindUserByName(ctx, u.Username)
		switch {
		case err == nil && !auth.CheckPassword(existing.PasswordHash, u.Password):
			logger.Warn("user exists with another password than the configuration's, left unchanged: the configured password "+
				"does not log in; to make it the password, give it as the first line of stdin to: "+command+" user password NAME",
				"username", u.Username)
			continue
		case err == nil:
			logger.Info("user exists, left unchanged", "username", u.Username)
			continue
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("find user %q: %w", u.Username, err)
		}
		if err := addUser(ctx, users, u.Username, u.Password, u.Admin); err != nil {
			return err
		}
		logger.Info("user created", "username", u.Username, "admin", u.Admin)
	}
	return nil
}

// ensureAdmin creates the user "admin" with a random password when no
// users are configured and the directory has none (always so for the
// in-memory store), and returns the password; otherwise it returns "".
func ensureAdmin(ctx context.Context, users store.UserDirectory, cfg *config) (string, error) {
	if len(cfg.users) > 0 {
		return "", nil
	}
	_, existing, err := users.ListUsers(ctx, store.ListQuery{Limit: 1})
	if err != nil {
		return "", fmt.Errorf("list users: %w", err)
	}
	if existing > 0 {
		return "", nil
	}
	password := rand.Text()
	if err := addUser(ctx, users, "admin", password, true); err != nil {
		return "", err
	}
	return password, nil
}

// addUser creates an active user with a bcrypt hash of password, a
// server administrator when admin is true.
func addUser(ctx context.Context, users store.UserDirectory, username, password string, admin bool) error {
	if err := checkUsername(username); err != nil {
		return err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return fmt.Errorf("user %q: %w", username, err)
	}
	if _, err := users.CreateUser(ctx, &store.User{Username: username, PasswordHash: hash, Active: true, Admin: admin}); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("user %q already exists", username)
		}
		return fmt.Errorf("create user %q: %w", username, err)
	}
	return nil
}

// setPassword sets the password of username, ending every earlier
// session of the user on every instance (store.Sessions.SetPassword), as
// POST /api/v1/auth/password does.
func setPassword(ctx context.Context, users store.UserDirectory, username, password string) error {
	sessions, ok := users.(store.Sessions)
	if !ok {
		return fmt.Errorf("the user directory (%T) cannot end sessions", users)
	}
	u, err := users.FindUserByName(ctx, username)
	if err != nil {
		return err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	_, err = sessions.SetPassword(ctx, u.ID, hash)
	return err
}

// checkUsername applies auth.CheckUsername's rules (the ones the users
// API applies), worded for the command line.
func checkUsername(name string) error {
	if err := auth.CheckUsername(name); err != nil {
		return fmt.Errorf("the %w", err)
	}
	return nil
}

// checkPassword applies the rules of auth.HashPassword without spending
// the time of a hash.
func checkPassword(pw string) error {
	switch {
	case pw == "":
		return errors.New("the password must not be empty")
	case len(pw) > auth.MaxPasswordBytes:
		return fmt.Errorf("the password is %d bytes long; at most %d bytes are allowed (bcrypt ignores the rest)",
			len(pw), auth.MaxPasswordBytes)
	}
	return nil
}
