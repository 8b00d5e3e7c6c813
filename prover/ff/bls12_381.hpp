// All BLS12-381 field types: fr_t, fp_t, fp2_t, fp6_t, fp12_t.
#pragma once
#include "prover/ff/fp.hpp"
#include "prover/ff/fp12.hpp"
#include "prover/ff/fp2.hpp"
#include "prover/ff/fp6.hpp"
#include "prover/ff/fr.hpp"
