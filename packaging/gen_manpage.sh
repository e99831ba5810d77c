#!/usr/bin/env bash
# Writes a man page (section 1, gzip -9n) from a program's --help and its subcommands' --help.
#   packaging/gen_manpage.sh BINARY NAME VERSION OUT.1.gz
# The text is CLI11's own help, so the page cannot drift from the options; it is set as
# preformatted text (roff .nf) with backslashes, leading dots and hyphens escaped.
set -euo pipefail
bin=$1 name=$2 version=$3 out=$4

# Runs BINARY with argv[0] = NAME, so the "Usage:" lines name the command, not the build path.
help_of() { (exec -a "$name" "$bin" "$@" --help) 2>&1; }
escape() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
# The subcommand names listed under "Subcommands:" in a help text.
subcommands() { awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1; next} on && !/^  / {on = 0}'; }

top=$(help_of)
summary=${top%%$'\n'*}        # CLI11's first line: "NAME: what it does"
summary=${summary#*: }
{
  echo ".TH ${name^^} 1 \"\" \"${name} ${version}\" \"User Commands\""
  echo ".SH NAME"
  echo "${name} \\- $(printf '%s\n' "$summary" | escape)"
  echo ".SH SYNOPSIS"
  echo ".B ${name}"
  echo "[OPTIONS] $(grep -q '^Subcommands:' <<<"$top" && echo 'SUBCOMMAND [OPTIONS]')"
  echo ".SH DESCRIPTION"
  echo ".nf"
  printf '%s\n' "$top" | escape
  echo ".fi"
  for sub in $(subcommands <<<"$top"); do
    text=$(help_of "$sub")
    echo ".SH \"${name^^} ${sub^^}\""
    echo ".nf"
    printf '%s\n' "$text" | escape
    echo ".fi"
    for subsub in $(subcommands <<<"$text"); do
      echo ".SS \"${name} ${sub} ${subsub}\""
      echo ".nf"
      help_of "$sub" "$subsub" | escape
      echo ".fi"
    done
  done
  echo ".SH FILES"
  echo ".TP"
  echo ".I /etc/preflight/"
  echo "run configuration (preflight.yaml), Slurm prolog, health check and epilog settings (prolog.env, health.env, epilog.env), SKU expectations (skus/)"
  echo ".TP"
  echo ".I /usr/share/preflight/"
  echo "Slurm prolog, health check, epilog and job-start wrapper (slurm/), Kubernetes manifests (manifests/k8s/)"
  echo ".SH SEE ALSO"
  if [[ $name == preflight ]]; then echo ".BR preflight\\-agent (1)"; else echo ".BR preflight (1)"; fi
  echo ".PP"
  echo "/usr/share/doc/preflight/README.md and install.md"
} >"${out%.gz}"
gzip -9nf "${out%.gz}"
