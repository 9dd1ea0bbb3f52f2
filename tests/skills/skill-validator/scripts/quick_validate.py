"""Check a skill folder's SKILL.md frontmatter with PyYAML."""

import re
import sys
from pathlib import Path

import yaml

ALLOWED = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def validate(folder):
    """`(True, message)` for a valid skill, else `(False, the problem)`."""
    skill_md = Path(folder) / "SKILL.md"
    if not skill_md.exists():
        return False, "SKILL.md not found"
    content = skill_md.read_text()
    match = re.match(r"^---\n(.*?)\n---", content, re.DOTALL)
    if not match:
        return False, "No YAML frontmatter found"
    try:
        frontmatter = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        return False, "Invalid YAML in frontmatter: %s" % error
    if not isinstance(frontmatter, dict):
        return False, "Frontmatter must be a YAML dictionary"
    unexpected = sorted(set(frontmatter) - ALLOWED)
    if unexpected:
        return False, "Unexpected key(s) in frontmatter: %s" % ", ".join(unexpected)
    name = str(frontmatter.get("name", "")).strip()
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
        return False, "Name %r should be hyphen-case (lowercase letters, digits and hyphens)" % name
    description = str(frontmatter.get("description", "")).strip()
    if not description:
        return False, "Missing 'description' in frontmatter"
    if "<" in description or ">" in description:
        return False, "Description cannot contain angle brackets (< or >)"
    if len(description) > 1024:
        return False, "Description is too long (%d characters, at most 1024)" % len(description)
    return True, "Skill is valid!"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: quick_validate.py SKILL_FOLDER", file=sys.stderr)
        sys.exit(2)
    valid, message = validate(sys.argv[1])
    print(message)
    sys.exit(0 if valid else 1)
