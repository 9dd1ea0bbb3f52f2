/* The `{{name}}` bundle's tools. */

#include <ctype.h>

#include "tool_plugin.h"
#include "cordon_json.h"

#define GREET "{{name}}.greet"

static bool blank(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (!isspace((unsigned char)text[i])) return false;
  }
  return true;
}

static void set_error(exports_cordon_plugin_tool_tool_error_t *err, uint8_t tag, const char *message) {
  err->tag = tag;
  tool_plugin_string_dup(&err->val.invalid_input, message);
}

void exports_cordon_plugin_tool_describe(exports_cordon_plugin_tool_list_tool_spec_t *ret) {
  ret->len = 1;
  ret->ptr = calloc(1, sizeof *ret->ptr);
  exports_cordon_plugin_tool_tool_spec_t *spec = &ret->ptr[0];
  tool_plugin_string_dup(&spec->name, GREET);
  tool_plugin_string_dup(&spec->description, "Greet someone by name, and count the greetings.");
  tool_plugin_string_dup(&spec->input_schema,
                         "{\"type\":\"object\",\"properties\":{"
                         "\"name\":{\"type\":\"string\",\"description\":\"Who to greet.\"},"
                         "\"excited\":{\"type\":\"boolean\",\"description\":\"End with an exclamation mark.\"}},"
                         "\"required\":[\"name\"],\"additionalProperties\":false}");
  spec->output_schema.is_some = false;
}

bool exports_cordon_plugin_tool_call(tool_plugin_string_t *name, exports_cordon_plugin_tool_json_t *args,
                                     exports_cordon_plugin_tool_tool_output_t *ret,
                                     exports_cordon_plugin_tool_tool_error_t *err) {
  bool known = name->len == strlen(GREET) && memcmp(name->ptr, GREET, name->len) == 0;
  if (!known) {
    set_error(err, CORDON_PLUGIN_TYPES_TOOL_ERROR_INVALID_INPUT, "unknown tool");
    return false;
  }
  char *who = NULL;
  size_t who_len = 0;
  bool excited = false;
  if (!cj_string((const char *)args->ptr, args->len, "name", &who, &who_len) || blank(who, who_len)) {
    free(who);
    set_error(err, CORDON_PLUGIN_TYPES_TOOL_ERROR_INVALID_INPUT, "name must not be blank");
    return false;
  }
  cj_bool((const char *)args->ptr, args->len, "excited", &excited);

  tool_plugin_string_t key;
  tool_plugin_string_set(&key, "{{name}}.greetings");
  int64_t count = 0;
  cordon_plugin_state_state_error_t state_error;
  if (!cordon_plugin_state_increment(&key, 1, &count, &state_error)) {
    free(who);
    set_error(err, CORDON_PLUGIN_TYPES_TOOL_ERROR_DENIED, "the greetings counter is not granted");
    return false;
  }

  cj_buf out = {0};
  cj_buf text = {0};
  cj_put(&text, "Hello, ");
  cj_put_bytes(&text, who, who_len);
  cj_putf(&text, "%s (greeting %lld)", excited ? "!" : ".", (long long)count);
  cj_put_string(&out, text.ptr, text.len);
  free(text.ptr);
  free(who);
  ret->content.ptr = (uint8_t *)out.ptr;
  ret->content.len = out.len;
  return true;
}
