package hds

import (
	"runtime/debug"
	"strings"
)

// modulePath is the path of this module, as builds record it.
const modulePath = "github.com/hds-go/hds"

// BuildVersion is the version of hds in the running build, as /health
// and the OpenAPI document's info.version report it: the version the
// build recorded for github.com/hds-go/hds, without its "v" (1.3.0 for
// v1.3.0, or a pseudo-version of a commit), or Version when the build
// records none. A host's metrics report it (the standalone server's
// hds_build_info does).
func BuildVersion() string { return moduleVersion() }

// moduleVersion is the version of this module in the running build, as
// /health and the OpenAPI document's info.version report it: the
// version the build recorded for github.com/hds-go/hds (a release tag
// such as v1.3.0, or a pseudo-version of a commit, without the "v"),
// or Version when the build knows none (a build inside the repository,
// "(devel)", or the module replaced by a directory).
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	return versionIn(info)
}

// versionIn is moduleVersion for the build info.
func versionIn(info *debug.BuildInfo) string {
	mod := &info.Main
	if mod.Path != modulePath {
		mod = nil
		for _, dep := range info.Deps {
			if dep.Path == modulePath {
				mod = dep
				break
			}
		}
	}
	if mod == nil {
		return Version
	}
	if mod.Replace != nil {
		// A directory has no version; a module replaced by another
		// version of it (or a fork) reports that one.
		mod = mod.Replace
	}
	v := mod.Version
	// The zero pseudo-version is what a require beside a replace says.
	if v == "" || v == "(devel)" || strings.HasPrefix(v, "v0.0.0-00010101000000-") {
		return Version
	}
	return strings.TrimPrefix(v, "v")
}
