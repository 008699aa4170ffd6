#!/usr/bin/env bash
# Makes the long recordings the transcription benchmark and the windowing check use, with
# espeak-ng and sox, into OUT_DIR (default: a fresh temporary directory, printed):
#   one.wav / one.txt       about 1 minute: jfk.wav, fixtures/speech/sentences.flac and
#                           fixtures/speech/answer.wav joined (the first is a real voice)
#   ten.wav / ten.txt       one.wav ten times over, about 10 minutes
#   lecture.wav / .txt      about 4 minutes of text written for this set (not in any
#                           model's training data as such), read by three espeak-ng
#                           voices at three speeds, with pauses of 0.25 to 1.2 s
# Usage: bash bench/transcribe/longset.sh JFK_WAV [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
jfk="$1"
out="${2:-$(mktemp -d)}"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sox -D "$jfk" "$root/fixtures/speech/sentences.flac" "$root/fixtures/speech/answer.wav" \
  -r 16000 -c 1 -b 16 "$out/one.wav"
{
  echo "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
  cat "$root/fixtures/speech/sentences.txt" "$root/fixtures/speech/answer.txt"
} > "$out/one.txt"
ten=()
for _ in 1 2 3 4 5 6 7 8 9 10; do ten+=("$out/one.wav"); done
sox -D "${ten[@]}" "$out/ten.wav"
for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$out/one.txt"; done > "$out/ten.txt"

lecture=(
  "Good morning everyone, and thank you for coming to the second session of the workshop"
  "Today we will look at how a small team can keep a piece of software healthy for many years"
  "The first thing to understand is that most of the cost of a program comes after it ships"
  "Every feature you add is a promise that somebody will have to keep"
  "So before we talk about tools, let us talk about saying no"
  "A good maintainer reads every request twice, once for what it asks and once for what it costs"
  "Last spring our group received forty requests in a single week"
  "We accepted six of them, and two of those we later wished we had refused"
  "The reason was simple: they touched the parts of the system that nobody understood any more"
  "That brings me to the second idea, which is that code nobody reads is code that slowly rots"
  "We started a habit of reading one old module aloud every Friday afternoon"
  "It sounds strange, but hearing the code makes its strange corners obvious"
  "Within three months we had removed almost a quarter of the lines in the repository"
  "Nothing broke, and the tests ran twice as fast as before"
  "Now, let me turn to testing, which is where most teams either save or lose their weekends"
  "A test should describe a behaviour that a user would notice if it changed"
  "If a test only repeats the code it checks, it will pass on the day the code is wrong"
  "We keep our slow tests in a separate suite that runs every night on a quiet machine"
  "The fast suite runs on every change and must finish before you can make a cup of tea"
  "When a test fails at random, we treat it as a bug in the product until we can prove otherwise"
  "About half of the time, the random failure turned out to be a real race in our own code"
  "The third idea is about measurement"
  "Numbers from a laptop on battery power are not numbers, they are weather reports"
  "We compare two builds side by side, in the same script, on the same machine, in the same minute"
  "Then we report the ratio, not the raw time, because the ratio survives a noisy neighbour"
  "Memory deserves the same care as speed, especially for programs that read long files"
  "A tool that needs twice the memory for a file twice as long will fail on the file that matters"
  "Let me give you an example from our audio pipeline"
  "The first version decoded the whole recording before doing anything with it"
  "That was fine for a voice message and hopeless for a three hour meeting"
  "The second version reads the recording in pieces and forgets each piece once it is done"
  "Its memory stays flat whether the meeting lasts ten minutes or ten hours"
  "Finally, a word about documentation"
  "Write down what you measured, the command that measured it, and the date"
  "A number without its command is a rumour, and rumours spread faster than facts"
  "Keep a short list of what does not work yet, and keep it honest"
  "Users forgive missing features far more easily than surprises"
  "That is all for this morning, so let us take a fifteen minute break"
  "After the break we will split into groups and review each other's pull requests"
  "Please bring your laptops, a charger, and a little patience"
)
voices=(en-us en-gb-x-rp en-us+m3)
speeds=(150 165 140)
pauses=(0.6 0.25 1.2 0.4 0.8)
parts=()
: > "$out/lecture.txt"
for i in "${!lecture[@]}"; do
  espeak-ng -v "${voices[$((i % 3))]}" -s "${speeds[$((i % 3))]}" -w "$tmp/raw.wav" "${lecture[$i]}"
  sox -D "$tmp/raw.wav" -r 16000 -c 1 -b 16 "$tmp/l$i.wav"
  sox -D -n -r 16000 -c 1 -b 16 "$tmp/p$i.wav" trim 0 "${pauses[$((i % 5))]}"
  parts+=("$tmp/l$i.wav" "$tmp/p$i.wav")
  printf '%s\n' "${lecture[$i]}" >> "$out/lecture.txt"
done
sox -D "${parts[@]}" "$out/lecture.wav"
echo "$out"
