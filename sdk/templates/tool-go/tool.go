// The `{{name}}` bundle's tools. The bindings (`cordon sdk bindings go`) call
// Describe and Call; the packages beside this one are Cordon's imports.
package export_cordon_plugin_tool

import (
	"encoding/json"
	"fmt"
	"strings"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	state "wit_component/cordon_plugin_state"
	types "wit_component/cordon_plugin_types"
)

const greetName = "{{name}}.greet"

type greetArgs struct {
	Name    string `json:"name"`
	Excited bool   `json:"excited"`
}

const greetSchema = `{"type":"object","properties":{
  "name":{"type":"string","description":"Who to greet."},
  "excited":{"type":"boolean","description":"End with an exclamation mark."}},
  "required":["name"],"additionalProperties":false}`

// Describe lists the bundle's tools.
func Describe() []types.ToolSpec {
	greet := types.ToolSpec{
		Name:         greetName,
		Description:  "Greet someone by name, and count the greetings.",
		InputSchema:  greetSchema,
		OutputSchema: witTypes.None[string](),
		Annotations:  types.ToolAnnotations{},
	}
	return []types.ToolSpec{greet}
}

type result = witTypes.Result[types.ToolOutput, types.ToolError]

func fail(err types.ToolError) result {
	return witTypes.Err[types.ToolOutput, types.ToolError](err)
}

// Call runs the tool `name` on its JSON arguments.
func Call(name string, args string) result {
	if name != greetName {
		return fail(types.MakeToolErrorInvalidInput("unknown tool " + name))
	}
	var input greetArgs
	if err := json.Unmarshal([]byte(args), &input); err != nil {
		return fail(types.MakeToolErrorInvalidInput(err.Error()))
	}
	if strings.TrimSpace(input.Name) == "" {
		return fail(types.MakeToolErrorInvalidInput("name must not be blank"))
	}
	count := state.Increment("{{name}}.greetings", 1)
	if count.IsErr() {
		return fail(types.MakeToolErrorDenied("the greetings counter is not granted"))
	}
	end := "."
	if input.Excited {
		end = "!"
	}
	text, _ := json.Marshal(fmt.Sprintf("Hello, %s%s (greeting %d)", input.Name, end, count.Ok()))
	return witTypes.Ok[types.ToolOutput, types.ToolError](types.ToolOutput{Content: string(text)})
}
