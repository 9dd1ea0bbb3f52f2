# The commands agents and skill scripts type, compared with GNU bash.
# Entries are separated by lines holding only `---`; a `# category: NAME`
# line starts a category. Each runs in order on one workspace per shell,
# so what an entry changes, the next sees on both sides.
# category: language
echo hello world
---
echo "quoted   spaces" 'single $HOME' plain\ escaped
---
NAME=world; echo "hello, $NAME"; echo "${NAME}s"
---
x=5; y=7; echo $((x * y + 1))
---
echo $(( (3 + 4) * 2 )) $((10 / 3)) $((10 % 3)) $((2 ** 10))
---
i=0; while [ $i -lt 3 ]; do echo "i=$i"; i=$((i + 1)); done
---
for f in a b c; do echo "item $f"; done
---
for i in {1..5}; do printf '%s ' "$i"; done; echo
---
for ((i = 0; i < 3; i++)); do echo "n$i"; done
---
n=3; until [ $n -eq 0 ]; do echo $n; n=$((n - 1)); done
---
if [ -f README.md ]; then echo "readme exists"; else echo "no readme"; fi
---
if [ -d missing ]; then echo yes; elif [ -d src ]; then echo "src is a dir"; fi
---
case "notes.txt" in *.md) echo markdown ;; *.txt) echo text ;; *) echo other ;; esac
---
greet() { echo "hi $1"; }; greet there; greet "you all"
---
add() { local a=$1 b=$2; echo $((a + b)); }; add 2 40
---
count=$(ls src | wc -l); echo "src has $count entries"
---
echo "today is `echo sunny`"
---
echo ${UNSET_VAR:-default} ${UNSET_VAR:=assigned} $UNSET_VAR
---
file=path/to/report.tar.gz; echo ${file##*/} ${file%%.*} ${file%.gz} ${file#*/}
---
s="Hello World"; echo ${#s} ${s:0:5} ${s:6} ${s/World/There} ${s,,} ${s^^}
---
v=aXbXc; echo ${v//X/-}
---
arr=(one two three); echo ${arr[1]} ${#arr[@]}; for x in "${arr[@]}"; do echo "[$x]"; done
---
arr=(a b); arr+=(c); echo "${arr[@]}"; echo "${!arr[@]}"
---
cat <<EOF
multi-line
text with $((1 + 1)) expansions
EOF
---
cat <<'EOF'
literal $HOME and $(not run)
EOF
---
cat > generated.md <<'EOF'
# Generated
- one
- two
EOF
cat generated.md
---
cat <<< "here string"
---
( cd src && ls )
---
{ echo first; echo second; } > grouped.txt; cat grouped.txt
---
echo one && echo two || echo three
---
false || echo "recovered"
---
false && echo "not printed"; echo "status $?"
---
! grep -q zzz notes.txt && echo "no zzz"
---
true; echo $?; false; echo $?
---
set -- alpha beta gamma; echo $# "$1" "$@"; shift; echo "$@"
---
set -e; echo before; false; echo after
---
set -u; echo "${DEFINED:-ok}"
---
set -o pipefail; false | true; echo $?
---
false | true; echo $?
---
[[ "abc" == a* ]] && echo "glob match"
---
[[ "v1.2.3" =~ ^v([0-9]+)\.([0-9]+) ]] && echo "major ${BASH_REMATCH[1]} minor ${BASH_REMATCH[2]}"
---
[[ -n "x" && -z "" ]] && echo "both"
---
test 5 -gt 3 && echo bigger
---
[ "a" = "a" ] && [ "a" != "b" ] && echo "strings compare"
---
x=10; (( x > 5 )) && echo "x is big"
---
let "y = 6 * 7"; echo $y
---
echo $((0x10 + 010))
---
f() { return 3; }; f; echo "returned $?"
---
outer() { inner() { echo inner; }; inner; }; outer
---
echo out; echo err >&2
---
ls missing-file 2>/dev/null; echo "code $?"
---
echo "to stderr" 1>&2 2>/dev/null; echo done
---
echo a > out1.txt; echo b >> out1.txt; cat out1.txt
---
cat < notes.txt | head -n 2
---
while read -r line; do echo "line: $line"; done < notes.txt
---
while IFS=, read -r id name age city; do echo "$name lives in $city"; done < data/users.csv
---
IFS=: read -r a b c <<< "x:y:z"; echo "$c $b $a"
---
echo "a b c" | { read -r first rest; echo "$first|$rest"; }
---
for f in src/*.py; do echo "python: $f"; done
---
for f in *.none; do echo "got $f"; done
---
echo src/*.{py,js}
---
echo {a,b}{1,2}
---
mkdir -p build/{bin,lib}; ls build
---
x="a  b   c"; echo $x; echo "$x"
---
printf '%s\n' "$(echo multi; echo line)"
---
v=$(printf 'trailing\n\n\n'); echo "[$v]"
---
echo "$(( $(echo 3) + 4 ))"
---
t=$(cat notes.txt | sort | uniq | head -n 1); echo "first: $t"
---
export GREETING=hey; echo $GREETING
---
unset GREETING; echo "[${GREETING}]"
---
readonly R=1; echo $R
---
declare -a list=(x y z); echo "${list[2]}"
---
echo ${#} ${0:+zero-set}
---
trap 'echo cleanup' EXIT; echo working
---
eval 'echo evaluated $((2 + 3))'
---
cmd="echo built"; $cmd
---
type echo >/dev/null && echo "echo is known"
---
command -v ls >/dev/null && echo "ls available"
---
i=0; while true; do i=$((i+1)); if [ $i -ge 4 ]; then break; fi; done; echo $i
---
for i in 1 2 3 4 5; do [ $i -eq 3 ] && continue; echo $i; done
---
for i in 1 2; do for j in a b; do [ $j = b ] && continue 2; echo $i$j; done; done
---
echo "$((RANDOM >= 0))"
---
sum=0; for n in 3 5 7; do sum=$((sum + n)); done; echo "sum=$sum"
---
case 5 in [0-9]) echo digit ;; esac
---
x=; [ -z "$x" ] && echo empty
---
echo -n "no newline"; echo " then newline"
---
echo -e "tab\there\nnew line"
---
printf '%5s|%-5s|%03d\n' ab cd 7
---
printf '%s=%s\n' a 1 b 2
---
printf "%.2f\n" 3.14159
---
# category: files
ls
---
ls -1 src
---
ls -a data
---
ls -la
---
ls -R docs
---
ls *.md
---
ls -d */
---
cat README.md
---
cat -n notes.txt
---
head -n 3 logs/app.log
---
tail -n 2 logs/app.log
---
head -c 10 README.md; echo
---
wc -l logs/app.log
---
wc -l < logs/app.log
---
wc -w README.md
---
wc -c data/config.json
---
mkdir -p tmp/a/b && touch tmp/a/b/file.txt && ls tmp/a/b
---
cp notes.txt notes.bak && cat notes.bak | wc -l
---
mv notes.bak tmp/ && ls tmp
---
rm -rf tmp && ls
---
cp -r src src_copy && ls src_copy && rm -r src_copy
---
touch empty.txt && [ -s empty.txt ] || echo "empty file"
---
rm empty.txt; [ -e empty.txt ] || echo gone
---
find . -name "*.py" | sort
---
find src -type f | sort
---
find . -type d -name lib
---
find . -name "*.md" -not -path "./docs/*" | sort
---
find . -maxdepth 1 -type f | sort
---
find . -name "*.log" -exec wc -l {} \;
---
find src -name "*.py" | xargs wc -l
---
stat -c %s README.md
---
du -sh src
---
basename /path/to/file.txt .txt
---
dirname /path/to/file.txt
---
realpath --relative-to=. src/app.py
---
readlink -f src
---
tree src
---
file README.md
---
ls -t | head -n 1
---
[ -r README.md ] && echo readable
---
test -x scripts/build.sh || echo "not executable"
---
chmod +x scripts/build.sh && echo chmodded
---
ln -s README.md link.md && cat link.md | head -n 1
---
# category: text
grep -n TODO src/app.py
---
grep -r "def " src | sort
---
grep -rn "import" src --include="*.py"
---
grep -c ERROR logs/app.log
---
grep -i warn logs/app.log
---
grep -v INFO logs/app.log
---
grep -E "ERROR|WARN" logs/app.log | wc -l
---
grep -o "[0-9]\+ms" logs/app.log
---
grep -l "def" src/*.py
---
grep -w apple notes.txt | head -1
---
grep -A1 ERROR logs/app.log
---
grep -q "name" data/config.json && echo "has name"
---
sort notes.txt
---
sort -u notes.txt
---
sort -r notes.txt
---
sort notes.txt | uniq -c
---
sort -t, -k3 -n data/users.csv
---
sort -n numbers.txt | tail -n 1
---
cut -d, -f2 data/users.csv
---
cut -d, -f2,4 data/users.csv | tail -n +2
---
cut -c1-5 README.md
---
sed 's/apple/APPLE/' notes.txt
---
sed -n '2,3p' logs/app.log
---
sed -i 's/banana/BANANA/' notes.txt && cat notes.txt
---
sed '/^$/d' README.md
---
sed -e 's/a/A/g' -e 's/e/E/' notes.txt
---
sed 's/,/ | /g' data/users.csv | head -n 2
---
uniq notes.txt
---
tr a-z A-Z < notes.txt
---
tr -d '\n' < notes.txt; echo
---
echo "a,b,c" | tr ',' '\n'
---
tr -s ' ' <<< "too    many   spaces"
---
seq 5
---
seq 2 2 10
---
seq -s, 1 4
---
awk -F, '{print $2}' data/users.csv
---
awk -F, 'NR>1 {sum += $3} END {print sum}' data/users.csv
---
awk '{print NR": "$0}' notes.txt
---
awk -F, '$4 == "paris" {print $2}' data/users.csv
---
awk 'length($0) > 5' notes.txt
---
awk '{print $2}' logs/app.log | sort | uniq -c
---
awk -F, 'NR > 1 {count[$4]++} END {for (c in count) print c, count[c]}' data/users.csv | sort
---
awk 'NR == 2' notes.txt
---
awk '/ERROR/ {print $NF}' logs/app.log
---
awk -v OFS=, '{print $1, $2}' logs/app.log
---
awk 'BEGIN {printf "%-6s|%5.1f|%d\n", "name", 3.14159, 42}'
---
awk 'END {print NR " lines"}' logs/app.log
---
awk '{gsub(/a/, "A"); print}' notes.txt
---
awk -F, 'NR > 1 && $3 > 30 {printf "%s is %d\n", $2, $3}' data/users.csv
---
awk -v limit=30 -F, 'NR > 1 && $3 < limit {print $2}' data/users.csv
---
awk '{total += length($0)} END {print total}' notes.txt
---
awk 'BEGIN {split("a:b:c", parts, ":"); print parts[3], toupper(parts[1])}'
---
awk 'NR == 1 {exit} END {print "end"}' notes.txt
---
awk '{print FILENAME ": " $0}' numbers.txt | head -n 2
---
printf 'k1 3\nk2 5\nk1 4\n' | awk '{s[$1] += $2} END {for (k in s) print k, s[k]}' | sort
---
awk 'missing {' notes.txt; echo "status $?"
---
ls src/*.py | xargs -n1 basename
---
echo "a b c" | xargs -n1
---
printf 'x\ny\n' | xargs echo got
---
diff notes.txt README.md > /dev/null; echo "diff says $?"
---
diff -u data/users.csv data/users.csv && echo same
---
printf 'a\nb\nc\n' > old.txt; printf 'a\nB\nc\nd\n' > new.txt; diff old.txt new.txt; echo "exit $?"
---
diff -u old.txt new.txt | tail -n +3
---
diff -q old.txt new.txt; echo "exit $?"
---
diff -U 0 old.txt new.txt | grep '^[-+][^-+]'
---
diff old.txt missing.txt; echo "exit $?"
---
diff -r docs docs && echo "docs unchanged"
---
cp -r docs docs2 && echo more >> docs2/guide.md && diff -r docs docs2; echo "exit $?"
---
rm -r docs2 old.txt new.txt
---
tee copy.txt < notes.txt | wc -l; cat copy.txt | wc -l
---
nl notes.txt
---
paste -d, notes.txt notes.txt
---
tac notes.txt
---
rev <<< "abc"
---
comm -12 <(sort notes.txt) <(sort notes.txt)
---
sha256sum data/config.json
---
md5sum data/config.json
---
expr 3 + 4
---
date +%Y > /dev/null && echo "has date"
---
jq -r .name data/config.json
---
jq '.version' data/config.json
---
jq . data/config.json
---
jq -c . data/config.json
---
jq 'keys' data/config.json
---
jq -r '.name + "-" + .version' data/config.json
---
jq '.debug | not' data/config.json
---
echo '[1,2,3]' | jq 'map(. * 2)'
---
echo '{"a":{"b":[1,2]}}' | jq -c '.a.b | length'
---
jq -n --arg v 1.0 '{version: $v}'
---
jq -e '.missing' data/config.json; echo "status $?"
---
echo '{"items":[{"n":"a","p":5},{"n":"b","p":15}]}' | jq -r '.items[] | select(.p > 10) | .n'
---
jq -r 'to_entries[] | "\(.key)=\(.value)"' data/config.json
---
jq -s 'length' data/config.json data/config.json
---
jq '.name = "renamed"' data/config.json > data/renamed.json && jq -r .name data/renamed.json
---
echo '[{"k":"b"},{"k":"a"}]' | jq -c 'sort_by(.k) | map(.k)'
---
jq '.[' data/config.json > /dev/null 2>&1; echo "status $?"
---
head -n 1 data/users.csv | tr ',' '\n' | wc -l
---
cat data/users.csv | tail -n +2 | cut -d, -f4 | sort | uniq -c | sort -rn
---
grep -h "" src/*.py | wc -l
---
cat logs/app.log | grep ERROR | sed 's/.*ERROR //'
---
echo "$(wc -l < notes.txt) lines"
---
printf '%s\n' b a c | sort
---
echo "hello" | sed 's/hello/goodbye/'
---
echo "  padded  " | sed 's/^ *//;s/ *$//'
---
echo "key=value" | cut -d= -f2
---
echo "one two three" | wc -w
---
echo "CamelCase" | tr '[:upper:]' '[:lower:]'
---
echo "path/to/file" | awk -F/ '{print $NF}'
---
printf 'b\na\nb\n' | sort | uniq -d
---
head -n 2 notes.txt | tail -n 1
---
grep -rl "TODO" . | sort
---
wc -l src/*.py | tail -n 1
---
ls src | grep -c py
---
cat README.md | grep "^#"
---
sort -k2 -t, data/users.csv | head -n 2
---
echo "error: x" | grep -q error && echo found || echo missing
---
# category: scripts
cat > hello.sh <<'EOF'
#!/bin/bash
name=${1:-nobody}
echo "Hello, $name!"
EOF
bash hello.sh Ada
---
sh hello.sh
---
bash -c 'echo "args: $@"' zero one two
---
chmod +x hello.sh; ./hello.sh Bob
---
source hello.sh Sourced
---
cat > lib.sh <<'EOF'
square() { echo $(( $1 * $1 )); }
EOF
. ./lib.sh; square 9
---
cat > check.sh <<'EOF'
set -euo pipefail
for f in data/*.csv; do
  rows=$(($(wc -l < "$f") - 1))
  echo "$f: $rows rows"
done
EOF
bash check.sh
---
cat > fail.sh <<'EOF'
set -e
echo start
false
echo unreachable
EOF
bash fail.sh; echo "exit $?"
---
cat > args.sh <<'EOF'
while [ $# -gt 0 ]; do
  case "$1" in
    -v|--verbose) echo verbose ;;
    -o) shift; echo "output=$1" ;;
    *) echo "arg=$1" ;;
  esac
  shift
done
EOF
bash args.sh -v -o out.txt extra
---
cat > usage.sh <<'EOF'
usage() { echo "usage: $0 FILE" >&2; exit 2; }
[ $# -eq 1 ] || usage
echo "file is $1"
EOF
bash usage.sh 2>/dev/null; echo "code $?"; bash usage.sh x
---
mkdir -p out && for f in src/*.py; do cp "$f" "out/$(basename "$f" .py).txt"; done; ls out
---
for dir in src data; do echo "$dir: $(ls $dir | wc -l)"; done
---
total=0; while read -r n; do total=$((total + n)); done < numbers.txt; echo $total
---
if grep -q "debug" data/config.json; then echo "has debug flag"; fi
---
[ -f .env ] && source .env || echo "no .env"
---
exists() { [ -e "$1" ]; }; exists README.md && echo yes; exists nope || echo no
---
log() { echo "[$1] ${*:2}"; }; log INFO started the job
---
join_by() { local IFS="$1"; shift; echo "$*"; }; join_by , a b c
---
max=0; for n in 4 9 2; do (( n > max )) && max=$n; done; echo $max
---
files=(src/*.py); echo "${#files[@]} python files"
---
declare -A colors 2>/dev/null; echo ok
---
echo "line1
line2" | while read -r l; do echo "> $l"; done
---
result=$(bash -c 'exit 3'); echo "sub status $?"
---
output=$( { echo out; echo err >&2; } 2>&1 ); echo "$output"
---
x=1; { x=2; }; echo $x; ( x=3 ); echo $x
---
echo "${PWD##*/}" > /dev/null; echo pwd-ok
---
cd src; ls; cd ..; ls | head -n 1
---
cd data && pwd >/dev/null && cd - >/dev/null; ls | head -n 1
---
python3 -c 'print("from python")' 2>/dev/null || echo "python unavailable"
---
git status --short 2>/dev/null | head -n 1; echo git-done
---
which ls >/dev/null && echo "which works"
---
sleep 0 && echo slept
---
env | grep -q PATH && echo "env has PATH"
---
yes | head -n 2
---
cat README.md | head -n 1 > title.txt; cat title.txt
---
echo "ä unicode ü" | wc -c
---
for i in $(seq 3); do echo "row $i"; done
---
echo "$(date +%s)" | grep -qE '^[0-9]+$' && echo numeric
---
mkdir -p a/b/c && echo deep > a/b/c/d.txt && find a -type f && rm -r a
---
ls | wc -l
