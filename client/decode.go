package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/hds-go/hds/internal/duration"
)

// Decode reads cluster k of collection col of project p as Cluster does
// and fills the struct dst points to from its records (see
// Cluster.Decode).
func (c *Client) Decode(ctx context.Context, p, col, k string, dst any) error {
	// A misuse is an error before any request.
	if _, err := target(dst); err != nil {
		return err
	}
	got, err := c.Cluster(ctx, p, col, k)
	if err != nil {
		return err
	}
	return got.Decode(dst)
}

// Decode fills the exported fields of the struct dst points to from the
// records named by their hds:"NAME" tags (docs/api.md#the-go-client).
// Fields without a tag are left alone; so is a field whose record does
// not exist, unless its tag says hds:"NAME,required", which makes that an
// error. The types fit as follows:
//
//   - INTEGER into any Go integer type (a value it cannot hold is an
//     error), but not time.Duration;
//   - FLOAT into float32 (a value beyond its range is an error) or float64;
//   - BOOLEAN into bool;
//   - STRING, CREDENTIAL, UUID, DATE and TIME into string;
//   - DATETIME into time.Time or string;
//   - STRING into time.Duration, read as the configuration reads
//     durations: Go's forms plus days ("90s", "1h30m", "7d");
//   - an array type into a slice of what its elements fit;
//   - NULL into the zero value of any field type ([]NULL: a slice of zero
//     values).
//
// Anything else (a type into a field it does not fit, INTEGER into a
// float or DATE into time.Time included) is an error naming the record
// and the Go field, and leaves dst unchanged. A dst that is not a non-nil
// pointer to a struct, and a tag on an unexported field or one naming no
// record, are errors too. Errors never show a value.
func (k *Cluster) Decode(dst any) error {
	v, err := target(dst)
	if err != nil {
		return err
	}
	// Filled on a copy, stored only when every field fits.
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("hds")
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		field := t.Name() + "." + f.Name
		if t.Name() == "" {
			field = f.Name
		}
		if name == "" {
			return fmt.Errorf("client: field %s: the hds tag names no record", field)
		}
		required := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "required":
				required = true
			default:
				return fmt.Errorf("client: field %s: unknown hds tag option %q (only required)", field, o)
			}
		}
		if !f.IsExported() {
			return fmt.Errorf("client: field %s: an hds tag on an unexported field (it cannot be set)", field)
		}
		r, ok := k.Records[name]
		if !ok {
			if required {
				return fmt.Errorf("client: record %q, required by field %s, is not in cluster %s", name, field, k.path())
			}
			continue
		}
		if err := assign(out.Field(i), r.Type, r.Value); err != nil {
			return fmt.Errorf("client: record %q (%s) into field %s (%s): %w", name, r.Type, field, f.Type, err)
		}
	}
	v.Set(out)
	return nil
}

// path names the cluster in errors.
func (k *Cluster) path() string {
	if k.Project == "" {
		return fmt.Sprintf("%q", k.Name)
	}
	return k.Project + "/" + k.Collection + "/" + k.Name
}

// target returns the struct dst points to, or why dst is not a non-nil
// pointer to a struct.
func target(dst any) (reflect.Value, error) {
	v := reflect.ValueOf(dst)
	if !v.IsValid() {
		return reflect.Value{}, errors.New("client: Decode needs a pointer to a struct, got nil")
	}
	if v.Kind() != reflect.Pointer {
		return reflect.Value{}, fmt.Errorf("client: Decode needs a pointer to a struct, got %s", v.Type())
	}
	if v.IsNil() {
		return reflect.Value{}, fmt.Errorf("client: Decode needs a pointer to a struct, got a nil %s", v.Type())
	}
	if v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("client: Decode needs a pointer to a struct, got %s", v.Type())
	}
	return v.Elem(), nil
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
)

// errMismatch is a value of a type that does not fit the field.
var errMismatch = errors.New("the type does not fit the field")

// assign sets f to value, of record type typ.
func assign(f reflect.Value, typ string, value any) error {
	if typ == "NULL" {
		f.SetZero()
		return nil
	}
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		if f.Kind() != reflect.Slice {
			return errMismatch
		}
		items := reflect.ValueOf(value)
		if items.Kind() != reflect.Slice {
			return errMismatch
		}
		out := reflect.MakeSlice(f.Type(), items.Len(), items.Len())
		for i := range items.Len() {
			if err := assign(out.Index(i), elem, items.Index(i).Interface()); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		f.Set(out)
		return nil
	}
	switch typ {
	case "INTEGER":
		n, ok := value.(int64)
		if !ok || f.Type() == durationType {
			return errMismatch
		}
		return setInteger(f, n)
	case "FLOAT":
		x, ok := value.(float64)
		if !ok {
			return errMismatch
		}
		switch f.Kind() {
		case reflect.Float32:
			if math.Abs(x) > math.MaxFloat32 {
				return errors.New("the value overflows float32")
			}
			f.SetFloat(x)
		case reflect.Float64:
			f.SetFloat(x)
		default:
			return errMismatch
		}
		return nil
	case "BOOLEAN":
		b, ok := value.(bool)
		if !ok || f.Kind() != reflect.Bool {
			return errMismatch
		}
		f.SetBool(b)
		return nil
	}
	s, ok := value.(string)
	if !ok {
		return errMismatch
	}
	switch {
	case typ == "STRING" && f.Type() == durationType:
		d, err := duration.Parse(s)
		if err != nil {
			// The value is not shown: it may have pulled in a credential.
			return errors.New(`the value is not a duration (Go's forms such as "90s" or "1h30m", or days such as "7d")`)
		}
		f.SetInt(int64(d))
	case typ == "DATETIME" && f.Type() == timeType:
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return errors.New("the value is not an RFC 3339 time")
		}
		f.Set(reflect.ValueOf(tm))
	case f.Kind() == reflect.String && f.Type() != durationType && stringType(typ):
		f.SetString(s)
	default:
		return errMismatch
	}
	return nil
}

// stringType reports whether values of typ fit a string field.
func stringType(typ string) bool {
	switch typ {
	case "STRING", "CREDENTIAL", "UUID", "DATE", "TIME", "DATETIME":
		return true
	}
	return false
}

// setInteger sets f, of an integer kind, to n, or says why it cannot.
func setInteger(f reflect.Value, n int64) error {
	switch f.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f.OverflowInt(n) {
			return fmt.Errorf("the value overflows %s", f.Type())
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n < 0 || f.OverflowUint(uint64(n)) {
			return fmt.Errorf("the value overflows %s", f.Type())
		}
		f.SetUint(uint64(n))
	default:
		return errMismatch
	}
	return nil
}
