#!/usr/bin/env bash
# Installs the Debian packages scry needs to build, test and benchmark. Idempotent: it installs
# only what is missing. As root it runs apt-get; otherwise it prints the exact command and stops.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config clang llvm libclang-rt-14-dev clang-format clang-tidy
  libmicrohttpd-dev libcurl4-openssl-dev libjansson-dev libzstd-dev libxxhash-dev
  libicu-dev libstemmer-dev libcmocka-dev zlib1g-dev libcrypt-dev libgnutls28-dev openssl
  python3 python3-pytest python3-elasticsearch
  default-jdk-headless liblucene8-java
  # Lucene 8.7 served over HTTP as Elasticsearch serves it (bench/LuceneHttpServer.java)
  libnetty-java libjackson2-core-java
  gnuplot-nox curl wrk
  etcd-server
  # benchmarks: vector sets from text (bench/vectors_from_text.py) and the hnswlib / FAISS
  # side-by-side (bench/knn_compare.py)
  python3-numpy python3-hnswlib python3-faiss
  # word lists the light-stemmer oracle samples (tests/oracle/analysis/make_light_words.py)
  wngerman wfrench wspanish witalian wportuguese
  # profiles of benchmark operations (bench/agg_profile.sh)
  linux-perf
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PKGS[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]}"
  echo "deps: run:  sudo apt-get install -y ${missing[*]}"
  exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
  apt-get update -qq
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
