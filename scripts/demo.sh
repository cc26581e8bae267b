#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the billing sample end to
# end (payment-service, the fault proxy and orders-billing as separate processes, with faults and
# kills), then prints the reconciliation. Arguments go to billing-demo (see --help); the exit
# status is non-zero on any violation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null
exec build/samples/billing/demo/billing-demo "$@"
