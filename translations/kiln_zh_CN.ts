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
        <translation>训练轮数（覆盖项目设置）。</translation>
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
</context>
</TS>
