/* The `wc` bundle: counts a text's lines, words, characters and bytes, as
 * `wc` does, plus the longest line, in C. */

#include <ctype.h>

#include "tool_plugin.h"
#include "cordon_json.h"

#define COUNT "wc.count"

static void set_error(exports_cordon_plugin_tool_tool_error_t *err, uint8_t tag, const char *message) {
  err->tag = tag;
  tool_plugin_string_dup(&err->val.invalid_input, message);
}

void exports_cordon_plugin_tool_describe(exports_cordon_plugin_tool_list_tool_spec_t *ret) {
  ret->len = 1;
  ret->ptr = calloc(1, sizeof *ret->ptr);
  exports_cordon_plugin_tool_tool_spec_t *spec = &ret->ptr[0];
  tool_plugin_string_dup(&spec->name, COUNT);
  tool_plugin_string_dup(&spec->description,
                         "Count a text's lines, words, characters (UTF-8) and bytes, as `wc` does, "
                         "and measure its longest line in characters.");
  tool_plugin_string_dup(&spec->input_schema,
                         "{\"type\":\"object\",\"properties\":{"
                         "\"text\":{\"type\":\"string\",\"description\":\"The text to count.\"}},"
                         "\"required\":[\"text\"],\"additionalProperties\":false}");
  spec->output_schema.is_some = true;
  tool_plugin_string_dup(&spec->output_schema.val,
                         "{\"type\":\"object\",\"properties\":{"
                         "\"lines\":{\"type\":\"integer\"},\"words\":{\"type\":\"integer\"},"
                         "\"characters\":{\"type\":\"integer\"},\"bytes\":{\"type\":\"integer\"},"
                         "\"longest_line\":{\"type\":\"integer\"}},"
                         "\"required\":[\"lines\",\"words\",\"characters\",\"bytes\",\"longest_line\"]}");
  spec->annotations.read_only = true;
  spec->annotations.idempotent = true;
}

bool exports_cordon_plugin_tool_call(tool_plugin_string_t *name, exports_cordon_plugin_tool_json_t *args,
                                     exports_cordon_plugin_tool_tool_output_t *ret,
                                     exports_cordon_plugin_tool_tool_error_t *err) {
  if (name->len != strlen(COUNT) || memcmp(name->ptr, COUNT, name->len) != 0) {
    set_error(err, CORDON_PLUGIN_TYPES_TOOL_ERROR_INVALID_INPUT, "unknown tool");
    return false;
  }
  char *text = NULL;
  size_t len = 0;
  if (!cj_string((const char *)args->ptr, args->len, "text", &text, &len)) {
    set_error(err, CORDON_PLUGIN_TYPES_TOOL_ERROR_INVALID_INPUT, "give `text`, a string");
    return false;
  }
  uint64_t lines = 0, words = 0, characters = 0, longest = 0, current = 0;
  bool in_word = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)text[i];
    bool continuation = (ch & 0xC0) == 0x80;
    if (!continuation) {
      characters++;
    }
    if (ch == '\n') {
      lines++;
      if (current > longest) longest = current;
      current = 0;
    } else if (!continuation) {
      current++;
    }
    bool space = ch < 0x80 && isspace(ch);
    if (space) {
      in_word = false;
    } else if (!in_word && !continuation) {
      in_word = true;
      words++;
    }
  }
  if (current > longest) longest = current;
  free(text);

  cj_buf out = {0};
  cj_putf(&out, "{\"lines\":%llu,\"words\":%llu,\"characters\":%llu,\"bytes\":%llu,\"longest_line\":%llu}",
          (unsigned long long)lines, (unsigned long long)words, (unsigned long long)characters,
          (unsigned long long)len, (unsigned long long)longest);
  ret->content.ptr = (uint8_t *)out.ptr;
  ret->content.len = out.len;
  return true;
}
