#!/usr/bin/env bash
# call1.sh on an H200, call-h100.sh on any other card.
D=bench/grids/results/eager-2026-12-06
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) bash $D/call1.sh ;; *) bash $D/call-h100.sh ;; esac
