// What a role may do on a project (API.md section 17; the rights table
// of store/access.go): the console shows only the controls the caller's
// role allows. The server still decides every request; this is
// presentation.

const roles = ['viewer', 'reader', 'editor', 'admin', 'owner'];

// The weakest role holding each right.
const needs = {
  read: 'viewer', // lists, records, history, members, the change feed
  reveal: 'reader', // credential values in plain text
  write: 'editor', // collections, clusters, records, restore
  admin: 'admin', // rename the project, members, API tokens, audit log
  own: 'owner', // delete the project
};

/** can reports whether role holds right; an unknown role holds none. */
export function can(role, right) {
  const have = roles.indexOf(role);
  return have >= 0 && right in needs && have >= roles.indexOf(needs[right]);
}
