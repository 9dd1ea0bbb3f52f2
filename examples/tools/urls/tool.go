// The `urls` bundle: takes URLs apart and resolves links against a base,
// with Go's net/url.
package export_cordon_plugin_tool

import (
	"encoding/json"
	"net/url"
	"sort"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	types "wit_component/cordon_plugin_types"
)

const parseSchema = `{"type":"object","properties":{
  "url":{"type":"string","description":"The URL to take apart."}},
  "required":["url"],"additionalProperties":false}`

const resolveSchema = `{"type":"object","properties":{
  "base":{"type":"string","description":"The absolute URL of the page the links are on."},
  "links":{"type":"array","items":{"type":"string"},"description":"The links as written on the page."}},
  "required":["base","links"],"additionalProperties":false}`

// Describe lists the bundle's tools.
func Describe() []types.ToolSpec {
	readOnly := types.ToolAnnotations{ReadOnly: true, Idempotent: true}
	parse := types.ToolSpec{
		Name:         "urls.parse",
		Description:  "Take a URL apart: scheme, user, host, port, path, query parameters (each with all its values) and fragment.",
		InputSchema:  parseSchema,
		OutputSchema: witTypes.None[string](),
		Annotations:  readOnly,
	}
	resolve := types.ToolSpec{
		Name:         "urls.resolve",
		Description:  "Resolve links as written on a page (relative or absolute) against the page's URL.",
		InputSchema:  resolveSchema,
		OutputSchema: witTypes.None[string](),
		Annotations:  readOnly,
	}
	return []types.ToolSpec{parse, resolve}
}

type result = witTypes.Result[types.ToolOutput, types.ToolError]

func invalid(message string) result {
	return witTypes.Err[types.ToolOutput, types.ToolError](types.MakeToolErrorInvalidInput(message))
}

func output(value any) result {
	text, err := json.Marshal(value)
	if err != nil {
		return witTypes.Err[types.ToolOutput, types.ToolError](types.MakeToolErrorFailed(err.Error()))
	}
	return witTypes.Ok[types.ToolOutput, types.ToolError](types.ToolOutput{Content: string(text)})
}

type parts struct {
	Scheme   string              `json:"scheme"`
	User     string              `json:"user,omitempty"`
	Host     string              `json:"host"`
	Port     string              `json:"port,omitempty"`
	Path     string              `json:"path"`
	Query    map[string][]string `json:"query"`
	Keys     []string            `json:"keys"`
	Fragment string              `json:"fragment,omitempty"`
}

// Call runs the tool `name` on its JSON arguments.
func Call(name string, args string) result {
	switch name {
	case "urls.parse":
		var input struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal([]byte(args), &input); err != nil {
			return invalid(err.Error())
		}
		parsed, err := url.Parse(input.URL)
		if err != nil {
			return invalid(err.Error())
		}
		query := parsed.Query()
		keys := make([]string, 0, len(query))
		for key := range query {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		return output(parts{
			Scheme:   parsed.Scheme,
			User:     parsed.User.Username(),
			Host:     parsed.Hostname(),
			Port:     parsed.Port(),
			Path:     parsed.Path,
			Query:    query,
			Keys:     keys,
			Fragment: parsed.Fragment,
		})
	case "urls.resolve":
		var input struct {
			Base  string   `json:"base"`
			Links []string `json:"links"`
		}
		if err := json.Unmarshal([]byte(args), &input); err != nil {
			return invalid(err.Error())
		}
		base, err := url.Parse(input.Base)
		if err != nil || !base.IsAbs() {
			return invalid("base must be an absolute URL, not " + input.Base)
		}
		resolved := make([]string, 0, len(input.Links))
		for _, link := range input.Links {
			reference, err := url.Parse(link)
			if err != nil {
				return invalid("link " + link + ": " + err.Error())
			}
			resolved = append(resolved, base.ResolveReference(reference).String())
		}
		return output(resolved)
	default:
		return invalid("unknown tool " + name)
	}
}
