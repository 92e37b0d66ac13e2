// tk-demo's parts in other files than demo.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "tk/runtime.h"

// demo_tensor_cores.cpp: each prints its row, appends it to `report` and
// returns whether the kernel's result matched the reference.
bool demoMatmul(tk::Device &dev, nlohmann::json &report);
bool demoAttention(tk::Device &dev, nlohmann::json &report);

// demo_similarity.cpp: the similarity seed, fused and op by op (`full`: the
// seed's n_dim 2000 with `samples` samples; else small shapes).
bool demoSimilarity(tk::Device &dev, nlohmann::json &report, bool full, int samples);
