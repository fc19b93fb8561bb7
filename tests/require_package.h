// Tests that read data or run a tool from a Debian package (or from ../shared) check for it with
// ANVIL_REQUIRE_PACKAGE in the test body. Where it is missing the test fails, naming what to
// install: scripts/install_deps.sh --tests installs every such package, so an absence means the
// install step is incomplete, and a skip would hide that (in CI above all). Only hardware CI
// never has (a GPU) may skip.
#pragma once

#include <gtest/gtest.h>

// `available`: whether the thing is there; `what`: what the test needs; `remedy`: how to get it
// (e.g. "apt-get install libonnx-testdata").
#define ANVIL_REQUIRE_PACKAGE(available, what, remedy)                  \
    do {                                                                \
        if (!(available)) {                                             \
            FAIL() << what << " is missing; " << remedy                 \
                   << " (scripts/install_deps.sh --tests installs it)"; \
        }                                                               \
    } while (0)

// The ONNX backend test data (node models with their inputs and outputs), which the importer,
// CLI and conformance tests read.
#define ANVIL_REQUIRE_ONNX_TESTDATA(available)                                                   \
    ANVIL_REQUIRE_PACKAGE(available, "the ONNX backend test data (/usr/share/libonnx-testdata)", \
                          "apt-get install libonnx-testdata")

// The reference models of ../shared/models (ResNet-18, MobileNetV2, ... with their test data).
#define ANVIL_REQUIRE_SHARED_MODELS(available)                               \
    ANVIL_REQUIRE_PACKAGE(available, "the shared models (../shared/models)", \
                          "check out the shared/ folder beside the repository")
