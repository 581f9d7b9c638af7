# `ember train --model gpt --nproc 2 --resume`: 40 steps, then the same run asked for 80 resumes
# at step 40 from OUT/checkpoint.safetensors and finishes; report.html holds the loss chart and a
# sample.
file(REMOVE_RECURSE ${OUT})
set(common train --model gpt --nproc 2 --resume --checkpoint-every 20 --eval-interval 20
  --eval-iters 4 --n-layer 2 --n-embd 64 --out ${OUT})
execute_process(COMMAND ${EMBER} ${common} --iters 40 RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"nproc\":2.*\"steps\":40")
  message(FATAL_ERROR "the first run failed (${rc}):\n${out}\n${err}")
endif()
if(NOT EXISTS ${OUT}/checkpoint.safetensors)
  message(FATAL_ERROR "no checkpoint after the first run")
endif()
execute_process(COMMAND ${EMBER} ${common} --iters 80 RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT err MATCHES "resumed from .*checkpoint.safetensors at step 40 on 2 ranks"
   OR NOT out MATCHES "\"steps\":40")
  message(FATAL_ERROR "the second run did not resume at step 40 (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT}/report.html html)
if(NOT html MATCHES "<svg" OR NOT html MATCHES "sample" OR html MATCHES "<script")
  message(FATAL_ERROR "report.html must hold the loss chart and a sample, and no scripts")
endif()
