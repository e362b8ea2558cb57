# Sourced by the call scripts: tune NAME SWEEP DTYPE DEADLINE tunes conv1d_cl at the shapes of
# shapes-NAME.txt with bench/tune/conv1d_cl_SWEEP.sweep.toml into $T until $SECONDS reaches
# DEADLINE (what finished by then is kept), and copies the table to $OUT/tuned.toml.
tune() {
  timeout -s INT $(($4 - SECONDS)) stdbuf -oL $K tune conv1d_cl --sweep bench/tune/conv1d_cl_$2.sweep.toml \
    --dtype $3 --shapes "$(cat $D/shapes-$1.txt)" --table $T --src kernel_src > $OUT/tune-$1.txt 2>&1
  echo "$1 rc $? at $SECONDS s: $(grep -c recorded $OUT/tune-$1.txt) recorded"
  cp $T $OUT/tuned.toml
}
