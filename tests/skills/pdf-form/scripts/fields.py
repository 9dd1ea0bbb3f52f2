"""Reading a form's text fields, shared by the skill's scripts."""

import json

from pypdf import PdfReader


def text_fields(path):
    """The form's text fields and their values, as sorted JSON."""
    fields = PdfReader(path).get_form_text_fields()
    return json.dumps({name: value or "" for name, value in fields.items()}, sort_keys=True)
