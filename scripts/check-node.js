#!/usr/bin/env node
// The first step of the npm scripts that run the project's code (`npm test`, `npm run example`, ...): stops
// with one line saying what to install when the Node they would run on cannot run them, instead of a stack
// trace further on. npm puts node_modules/.bin first on the PATH, so that Node is the project's own Node 24
// where `npm ci` installed one for the machine (Linux x64 and arm64, macOS x64 and arm64: the optional
// packages of tools/dev-node), else the machine's. Native Windows is not supported: use WSL.
//
// Written in the JavaScript every Node since 4 parses, so an old Node reaches the message.
"use strict";

var FLOOR = [22, 19, 0];

/**
 * What stops the scripts on this Node and platform: one line, or undefined when nothing does.
 * @param {string} version process.version, e.g. "v20.20.2"
 * @param {string} platform process.platform
 * @param {string} arch process.arch
 * @returns {string | undefined}
 */
function problem(version, platform, arch) {
  if (platform === "win32") {
    return (
      "pulumi-secrets-scheduler: native Windows is not supported; run npm ci and the npm scripts inside WSL " +
      "(https://learn.microsoft.com/windows/wsl/install), in a copy of the repository in the Linux file system"
    );
  }
  var parts = String(version).replace(/^v/, "").split(".");
  for (var i = 0; i < FLOOR.length; i++) {
    var n = parseInt(parts[i] || "0", 10);
    if (n > FLOOR[i]) return undefined;
    if (n < FLOOR[i]) {
      return (
        "pulumi-secrets-scheduler: the npm scripts need Node.js " +
        FLOOR.join(".") +
        " or newer and found " +
        version +
        " on " +
        platform +
        "-" +
        arch +
        " (npm ci installs Node 24 on Linux and macOS, x64 and arm64, unless optional packages are omitted): " +
        "install Node.js 24 LTS from https://nodejs.org/en/download, or run npm ci again"
      );
    }
  }
  return undefined;
}

module.exports.problem = problem;

if (require.main === module) {
  var line = problem(process.version, process.platform, process.arch);
  if (line) {
    console.error(line);
    process.exit(1);
  }
}
