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
</context>
</TS>
