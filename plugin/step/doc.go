// Package step is the one pipeline from an Argo template to the objects of
// one attempt of its run, used alike by the core (package execute), by
// `sparkplug render` (package render) and by the examples'
// tests, so that what a person previews is what the plugin does:
//
//	template --Parse--> Step{Body, Key, Timeout} --Build(workflow, node, attempt)--> objects.Set
//
// BodyOf finds a template's spark body (spark.PluginBody's rule); Parse
// reads it with the plugin's defaults and keys the template (Key, a
// label-safe hash of its canonical form); Build names the run and has
// package objects make them. Substitute is Argo's simple parameter
// substitution, for the callers that hold a template before Argo has
// resolved it (render, the examples' tests); the agent sends templates
// already substituted.
//
// Everything here is pure: no API server, no clock.
package step
