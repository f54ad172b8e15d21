package handler

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// POST P/batch (docs/api.md#batch-export-and-import): 1 to maxBatchOps
// record operations, applied in order in one atomic store call
// (store.Store.Apply), or none of them.

// maxBatchOps is the most operations one batch may hold.
const maxBatchOps = 1000

// batchBody is the body of POST P/batch. Operations are decoded one by
// one, so that an error inside one names it.
type batchBody struct {
	Operations    []json.RawMessage `json:"operations"`
	CreateParents bool              `json:"create_parents"`
}

// batchOp is one operation of a batch.
type batchOp struct {
	Op         *string         `json:"op"`
	Collection *string         `json:"collection"`
	Cluster    *string         `json:"cluster"`
	Record     *string         `json:"record"`
	Type       *string         `json:"type"`
	Value      json.RawMessage `json:"value"`
	Name       *string         `json:"name"`
	IfMatch    *string         `json:"if_match"`
}

// errNotABatch refuses a body that is not a batch.
var errNotABatch = envelope.BadRequest(`the body must be {"operations": [...]} with 1 to ` + strconv.Itoa(maxBatchOps) + ` operations`)

// handleBatch serves POST P/batch. Each operation is read and checked as
// its own request would be; when operation N is bad, the operations
// before it are tried in a dry run first, so that the answer is the error
// of the first failing operation, whichever kind it is.
func (rec records) handleBatch() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		var body batchBody
		present, err := envelope.Decode(r, &body)
		switch {
		case err != nil:
		case !present || body.Operations == nil:
			err = errNotABatch
		case len(body.Operations) == 0 || len(body.Operations) > maxBatchOps:
			err = envelope.BadRequest("a batch holds 1 to " + strconv.Itoa(maxBatchOps) + " operations, this one " +
				strconv.Itoa(len(body.Operations)))
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		ops := make([]store.Op, 0, len(body.Operations))
		missing := make([]bool, len(body.Operations))
		var bad error
		for i, raw := range body.Operations {
			op, miss, err := rec.batchOp(raw)
			if err != nil {
				bad = &store.OpError{Index: i, Err: err}
				break
			}
			ops, missing[i] = append(ops, op), miss
			body.Operations[i] = nil // read: the collector may take it
		}
		b := store.Batch{Ops: ops, CreateParents: body.CreateParents,
			Write: store.Write{MaxVersions: rec.pre.maxVersions}}
		if bad != nil {
			b.DryRun = true
			_, err := rec.store.Apply(r.Context(), pathOf(r), b)
			var oe *store.OpError
			if err == nil || (len(ops) == 0 && !errors.Is(err, store.ErrPermissionDenied) && !errors.As(err, &oe)) {
				err = bad
			}
			batchFail(w, r, err, missing)
			return
		}
		results, err := rec.store.Apply(r.Context(), pathOf(r), b)
		extendWriteDeadline(w, r) // a big batch may take longer than the write timeout to apply
		if err != nil {
			batchFail(w, r, err, missing)
			return
		}
		// The answer is written as it is made; a credential that cannot
		// be masked is found first, while an error can still be answered.
		for _, res := range results {
			if res.Record != nil && res.Record.Type.IsCredential() {
				if _, err := rec.creds.visible(res.Record, false); err != nil {
					envelope.Error(w, r, err)
					return
				}
			}
		}
		a := startAnswer(w, r, http.StatusOK)
		a.b = append(a.b, `{"results":[`...)
		for i, res := range results {
			b := a.b
			if i > 0 {
				b = append(b, ',')
			}
			status := http.StatusOK
			switch {
			case res.Created:
				status = http.StatusCreated
			case res.Record == nil:
				status = http.StatusNoContent
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"status":`...)
			b = strconv.AppendInt(b, int64(status), 10)
			b = append(b, `,"record":`...)
			if res.Record == nil {
				b = append(b, "null"...)
			} else {
				v, _ := rec.creds.visible(res.Record, false) // checked above
				b = appendRecord(b, res.Record, v)
			}
			a.b = append(b, '}')
			results[i].Record = nil // written: the collector may take it
			a.more()
		}
		a.b = append(a.b, "]}"...)
		a.end("Batch applied")
	}
}

// batchFail answers a batch refused by the store or by its input: the
// error of the failing operation, whose details the envelope prefixes
// with "operation N: ". A failed precondition of an operation that
// lacked a required if_match is 428.
func batchFail(w http.ResponseWriter, r *http.Request, err error, missing []bool) {
	var oe *store.OpError
	if errors.As(err, &oe) && errors.Is(oe.Err, store.ErrPreconditionFailed) && oe.Index < len(missing) && missing[oe.Index] {
		err = &store.OpError{Index: oe.Index, Err: envelope.ErrPreconditionRequired}
	}
	envelope.Error(w, r, err)
}

// batchOp reads one operation of a batch into a store.Op, with the checks
// its own request (POST R, PUT R, DELETE R) would make before the store.
// It reports whether the op lacks an if_match the server requires.
func (rec records) batchOp(raw json.RawMessage) (store.Op, bool, error) {
	var in batchOp
	if err := envelope.DecodeJSON(raw, &in, "the operation"); err != nil {
		return store.Op{}, false, envelope.BadRequest(err.Error())
	}
	if in.Op == nil {
		return store.Op{}, false, envelope.BadRequest(`the field "op" is required: create, update, upsert or delete`)
	}
	kind := store.OpKind(*in.Op)
	switch kind {
	case store.OpCreate, store.OpUpdate, store.OpUpsert, store.OpDelete:
	default:
		return store.Op{}, false, envelope.BadRequest("unknown op " + strconv.Quote(*in.Op) + ": use create, update, upsert or delete")
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"collection", in.Collection}, {"cluster", in.Cluster}, {"record", in.Record}} {
		if f.value == nil {
			return store.Op{}, false, envelope.BadRequest(`the field "` + f.name + `" is required`)
		}
	}
	switch {
	case in.Name != nil && kind != store.OpUpdate:
		return store.Op{}, false, envelope.BadRequest(`"name" renames a record: only an update takes it`)
	case kind == store.OpDelete && (in.Type != nil || in.Value != nil):
		return store.Op{}, false, envelope.BadRequest(`a delete takes no "type" or "value"`)
	case kind == store.OpCreate && in.IfMatch != nil:
		return store.Op{}, false, envelope.BadRequest(`"if_match" applies to update, upsert and delete, not to create`)
	}
	op := store.Op{Kind: kind, Collection: *in.Collection, Cluster: *in.Cluster, Record: *in.Record}
	missing := false
	switch {
	case in.IfMatch != nil:
		h := http.Header{}
		h.Set("If-Match", *in.IfMatch)
		tags, err := parseEntityTags(h, "If-Match")
		if err != nil {
			return store.Op{}, false, envelope.BadRequest(`"if_match" must be "*" or a comma-separated list of quoted entity tags, as the ETag header gives them`)
		}
		if !tags.any {
			op.IfMatch = append([]string{}, tags.strong...)
		}
	case rec.pre.requireIfMatch && (kind == store.OpUpdate || kind == store.OpDelete):
		op.IfMatch, missing = []string{}, true
	}
	input := recordInput{fromBody: true, rawValue: in.Value, hasValue: in.Value != nil}
	if in.Type != nil {
		input.typ, input.hasTyp = *in.Type, true
	}
	if in.Name != nil {
		input.name, input.hasName = *in.Name, true
	}
	switch kind {
	case store.OpCreate, store.OpUpsert:
		if !input.hasTyp {
			return store.Op{}, false, envelope.BadRequest(`the record type is required: "type"`)
		}
		nr, err := rec.newRecord(input, op.Record)
		if err != nil {
			return store.Op{}, false, err
		}
		op.New = nr
		if t := nr.Type; kind == store.OpUpsert {
			op.Update = func(cur *store.Record) error {
				v, err := rec.parseValue(input, t, cur.ID)
				cur.Type, cur.Value = t, v
				return err
			}
		}
	case store.OpUpdate:
		newType, err := checkUpdate(input)
		if err != nil {
			return store.Op{}, false, err
		}
		op.Update = rec.updater(input, newType)
	}
	return op, missing, nil
}
